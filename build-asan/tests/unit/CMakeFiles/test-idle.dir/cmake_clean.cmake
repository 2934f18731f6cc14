file(REMOVE_RECURSE
  "CMakeFiles/test-idle.dir/test-idle.c.o"
  "CMakeFiles/test-idle.dir/test-idle.c.o.d"
  "test-idle"
  "test-idle.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test-idle.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
