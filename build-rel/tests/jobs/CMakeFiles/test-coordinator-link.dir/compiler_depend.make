# Empty compiler generated dependencies file for test-coordinator-link.
# This may be replaced when dependencies are built.
