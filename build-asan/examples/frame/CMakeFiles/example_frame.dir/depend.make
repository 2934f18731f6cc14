# Empty dependencies file for example_frame.
# This may be replaced when dependencies are built.
