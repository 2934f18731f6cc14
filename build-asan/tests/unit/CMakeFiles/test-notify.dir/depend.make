# Empty dependencies file for test-notify.
# This may be replaced when dependencies are built.
