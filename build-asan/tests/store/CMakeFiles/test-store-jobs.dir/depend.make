# Empty dependencies file for test-store-jobs.
# This may be replaced when dependencies are built.
