# Empty dependencies file for sdlive-cluster-core.
# This may be replaced when dependencies are built.
