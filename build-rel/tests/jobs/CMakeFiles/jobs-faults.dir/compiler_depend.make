# Empty compiler generated dependencies file for jobs-faults.
# This may be replaced when dependencies are built.
