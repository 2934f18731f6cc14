# Empty dependencies file for sdlive_test_harness.
# This may be replaced when dependencies are built.
