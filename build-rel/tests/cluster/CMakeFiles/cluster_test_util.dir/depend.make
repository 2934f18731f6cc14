# Empty dependencies file for cluster_test_util.
# This may be replaced when dependencies are built.
