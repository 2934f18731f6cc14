# Empty dependencies file for sdlive-worker.
# This may be replaced when dependencies are built.
