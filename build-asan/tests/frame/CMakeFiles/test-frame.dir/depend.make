# Empty dependencies file for test-frame.
# This may be replaced when dependencies are built.
