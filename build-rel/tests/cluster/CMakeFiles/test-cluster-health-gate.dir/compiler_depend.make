# Empty compiler generated dependencies file for test-cluster-health-gate.
# This may be replaced when dependencies are built.
