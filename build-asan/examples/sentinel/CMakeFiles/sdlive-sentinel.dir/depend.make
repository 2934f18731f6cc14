# Empty dependencies file for sdlive-sentinel.
# This may be replaced when dependencies are built.
