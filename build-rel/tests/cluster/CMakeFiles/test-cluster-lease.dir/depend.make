# Empty dependencies file for test-cluster-lease.
# This may be replaced when dependencies are built.
