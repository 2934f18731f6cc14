# Empty dependencies file for test-watchdog.
# This may be replaced when dependencies are built.
