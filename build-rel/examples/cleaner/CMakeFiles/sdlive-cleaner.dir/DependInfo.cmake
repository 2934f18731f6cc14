
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt/coord/examples/cleaner/main.c" "examples/cleaner/CMakeFiles/sdlive-cleaner.dir/main.c.o" "gcc" "examples/cleaner/CMakeFiles/sdlive-cleaner.dir/main.c.o.d"
  "/work/wt/coord/examples/cleaner/pass.c" "examples/cleaner/CMakeFiles/sdlive-cleaner.dir/pass.c.o" "gcc" "examples/cleaner/CMakeFiles/sdlive-cleaner.dir/pass.c.o.d"
  "/work/wt/coord/examples/cleaner/populate.c" "examples/cleaner/CMakeFiles/sdlive-cleaner.dir/populate.c.o" "gcc" "examples/cleaner/CMakeFiles/sdlive-cleaner.dir/populate.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/wt/coord/build-rel/examples/common/CMakeFiles/sdlive-examples-common.dir/DependInfo.cmake"
  "/work/wt/coord/build-rel/src/CMakeFiles/sdlive.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
