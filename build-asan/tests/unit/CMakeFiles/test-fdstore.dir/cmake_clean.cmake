file(REMOVE_RECURSE
  "CMakeFiles/test-fdstore.dir/test-fdstore.c.o"
  "CMakeFiles/test-fdstore.dir/test-fdstore.c.o.d"
  "test-fdstore"
  "test-fdstore.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test-fdstore.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
