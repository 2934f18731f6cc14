# Empty dependencies file for example_store.
# This may be replaced when dependencies are built.
