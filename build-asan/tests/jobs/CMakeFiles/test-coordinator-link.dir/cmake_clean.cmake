file(REMOVE_RECURSE
  "CMakeFiles/test-coordinator-link.dir/__/__/examples/worker/coordinator_link.c.o"
  "CMakeFiles/test-coordinator-link.dir/__/__/examples/worker/coordinator_link.c.o.d"
  "CMakeFiles/test-coordinator-link.dir/test-coordinator-link.c.o"
  "CMakeFiles/test-coordinator-link.dir/test-coordinator-link.c.o.d"
  "test-coordinator-link"
  "test-coordinator-link.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test-coordinator-link.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
