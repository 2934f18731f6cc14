# Empty dependencies file for test-faults.
# This may be replaced when dependencies are built.
