# Empty dependencies file for test-protocol.
# This may be replaced when dependencies are built.
