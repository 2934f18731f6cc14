file(REMOVE_RECURSE
  "CMakeFiles/example_store.dir/store.c.o"
  "CMakeFiles/example_store.dir/store.c.o.d"
  "CMakeFiles/example_store.dir/store_pg.c.o"
  "CMakeFiles/example_store.dir/store_pg.c.o.d"
  "CMakeFiles/example_store.dir/store_sqlite.c.o"
  "CMakeFiles/example_store.dir/store_sqlite.c.o.d"
  "libexample_store.a"
  "libexample_store.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/example_store.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
