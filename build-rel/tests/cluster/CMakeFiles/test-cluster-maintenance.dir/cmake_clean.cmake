file(REMOVE_RECURSE
  "CMakeFiles/test-cluster-maintenance.dir/test-maintenance.c.o"
  "CMakeFiles/test-cluster-maintenance.dir/test-maintenance.c.o.d"
  "test-cluster-maintenance"
  "test-cluster-maintenance.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test-cluster-maintenance.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
