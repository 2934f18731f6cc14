# Empty dependencies file for sdlive-cleaner.
# This may be replaced when dependencies are built.
