file(REMOVE_RECURSE
  "CMakeFiles/test-frame.dir/test-frame.c.o"
  "CMakeFiles/test-frame.dir/test-frame.c.o.d"
  "test-frame"
  "test-frame.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test-frame.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
