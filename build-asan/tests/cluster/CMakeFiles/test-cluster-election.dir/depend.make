# Empty dependencies file for test-cluster-election.
# This may be replaced when dependencies are built.
