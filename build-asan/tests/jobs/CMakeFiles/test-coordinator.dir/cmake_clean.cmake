file(REMOVE_RECURSE
  "CMakeFiles/test-coordinator.dir/test-coordinator.c.o"
  "CMakeFiles/test-coordinator.dir/test-coordinator.c.o.d"
  "test-coordinator"
  "test-coordinator.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test-coordinator.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
