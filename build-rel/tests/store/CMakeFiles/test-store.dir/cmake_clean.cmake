file(REMOVE_RECURSE
  "CMakeFiles/test-store.dir/store-test-env.c.o"
  "CMakeFiles/test-store.dir/store-test-env.c.o.d"
  "CMakeFiles/test-store.dir/test-store.c.o"
  "CMakeFiles/test-store.dir/test-store.c.o.d"
  "test-store"
  "test-store.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test-store.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
