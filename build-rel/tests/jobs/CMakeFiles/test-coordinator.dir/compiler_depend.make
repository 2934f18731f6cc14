# Empty compiler generated dependencies file for test-coordinator.
# This may be replaced when dependencies are built.
