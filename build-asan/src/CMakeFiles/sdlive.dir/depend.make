# Empty dependencies file for sdlive.
# This may be replaced when dependencies are built.
