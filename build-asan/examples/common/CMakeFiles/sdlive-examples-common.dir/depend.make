# Empty dependencies file for sdlive-examples-common.
# This may be replaced when dependencies are built.
