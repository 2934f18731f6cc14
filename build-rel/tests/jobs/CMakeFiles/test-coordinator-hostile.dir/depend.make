# Empty dependencies file for test-coordinator-hostile.
# This may be replaced when dependencies are built.
