# Empty dependencies file for jobs-bench.
# This may be replaced when dependencies are built.
