# Empty compiler generated dependencies file for jobs-inspect.
# This may be replaced when dependencies are built.
