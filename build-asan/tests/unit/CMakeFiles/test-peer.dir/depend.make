# Empty dependencies file for test-peer.
# This may be replaced when dependencies are built.
