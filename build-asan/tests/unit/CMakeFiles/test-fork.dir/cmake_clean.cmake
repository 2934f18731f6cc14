file(REMOVE_RECURSE
  "CMakeFiles/test-fork.dir/test-fork.c.o"
  "CMakeFiles/test-fork.dir/test-fork.c.o.d"
  "test-fork"
  "test-fork.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test-fork.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
