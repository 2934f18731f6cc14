# Empty dependencies file for test-idle.
# This may be replaced when dependencies are built.
