# Empty compiler generated dependencies file for test-store.
# This may be replaced when dependencies are built.
