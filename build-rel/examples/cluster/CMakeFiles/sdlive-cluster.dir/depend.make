# Empty dependencies file for sdlive-cluster.
# This may be replaced when dependencies are built.
