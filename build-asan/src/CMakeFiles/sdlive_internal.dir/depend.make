# Empty dependencies file for sdlive_internal.
# This may be replaced when dependencies are built.
