file(REMOVE_RECURSE
  "CMakeFiles/test-lifecycle.dir/test-lifecycle.c.o"
  "CMakeFiles/test-lifecycle.dir/test-lifecycle.c.o.d"
  "test-lifecycle"
  "test-lifecycle.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test-lifecycle.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
