# Empty dependencies file for test-fork.
# This may be replaced when dependencies are built.
