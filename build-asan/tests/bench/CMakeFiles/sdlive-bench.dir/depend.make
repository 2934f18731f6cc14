# Empty dependencies file for sdlive-bench.
# This may be replaced when dependencies are built.
