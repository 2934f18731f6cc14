# Empty dependencies file for test-cluster-maintenance.
# This may be replaced when dependencies are built.
