# Empty compiler generated dependencies file for sdlive-acceptor.
# This may be replaced when dependencies are built.
