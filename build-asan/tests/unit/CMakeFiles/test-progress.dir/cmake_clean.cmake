file(REMOVE_RECURSE
  "CMakeFiles/test-progress.dir/test-progress.c.o"
  "CMakeFiles/test-progress.dir/test-progress.c.o.d"
  "test-progress"
  "test-progress.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test-progress.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
