file(REMOVE_RECURSE
  "CMakeFiles/test-cluster-election.dir/test-election.c.o"
  "CMakeFiles/test-cluster-election.dir/test-election.c.o.d"
  "test-cluster-election"
  "test-cluster-election.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test-cluster-election.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
