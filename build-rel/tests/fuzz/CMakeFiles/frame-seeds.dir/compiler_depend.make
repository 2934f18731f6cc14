# Empty compiler generated dependencies file for frame-seeds.
# This may be replaced when dependencies are built.
