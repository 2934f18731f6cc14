# Empty dependencies file for test-lifecycle.
# This may be replaced when dependencies are built.
