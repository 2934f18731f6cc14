# Empty dependencies file for fuzz-replay.
# This may be replaced when dependencies are built.
