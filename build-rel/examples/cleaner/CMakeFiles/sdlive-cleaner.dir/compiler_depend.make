# Empty compiler generated dependencies file for sdlive-cleaner.
# This may be replaced when dependencies are built.
