file(REMOVE_RECURSE
  "CMakeFiles/cluster_test_util.dir/cluster-test-util.c.o"
  "CMakeFiles/cluster_test_util.dir/cluster-test-util.c.o.d"
  "libcluster_test_util.a"
  "libcluster_test_util.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cluster_test_util.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
