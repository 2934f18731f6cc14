file(REMOVE_RECURSE
  "CMakeFiles/test-cluster-lease.dir/test-lease.c.o"
  "CMakeFiles/test-cluster-lease.dir/test-lease.c.o.d"
  "test-cluster-lease"
  "test-cluster-lease.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test-cluster-lease.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
