file(REMOVE_RECURSE
  "CMakeFiles/test-faults.dir/test-faults.c.o"
  "CMakeFiles/test-faults.dir/test-faults.c.o.d"
  "test-faults"
  "test-faults.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test-faults.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
