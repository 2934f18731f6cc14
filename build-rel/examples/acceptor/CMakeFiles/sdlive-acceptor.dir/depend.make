# Empty dependencies file for sdlive-acceptor.
# This may be replaced when dependencies are built.
