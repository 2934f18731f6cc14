file(REMOVE_RECURSE
  "CMakeFiles/test-cluster-health-gate.dir/test-health-gate.c.o"
  "CMakeFiles/test-cluster-health-gate.dir/test-health-gate.c.o.d"
  "test-cluster-health-gate"
  "test-cluster-health-gate.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test-cluster-health-gate.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
