
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt/coord/examples/store/store.c" "examples/store/CMakeFiles/example_store.dir/store.c.o" "gcc" "examples/store/CMakeFiles/example_store.dir/store.c.o.d"
  "/work/wt/coord/examples/store/store_pg.c" "examples/store/CMakeFiles/example_store.dir/store_pg.c.o" "gcc" "examples/store/CMakeFiles/example_store.dir/store_pg.c.o.d"
  "/work/wt/coord/examples/store/store_sqlite.c" "examples/store/CMakeFiles/example_store.dir/store_sqlite.c.o" "gcc" "examples/store/CMakeFiles/example_store.dir/store_sqlite.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
