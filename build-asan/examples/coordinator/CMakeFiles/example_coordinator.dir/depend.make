# Empty dependencies file for example_coordinator.
# This may be replaced when dependencies are built.
