# Empty dependencies file for test-progress.
# This may be replaced when dependencies are built.
