# Empty dependencies file for test-fdstore.
# This may be replaced when dependencies are built.
