
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt/review-lib/tests/unit/test-protocol.c" "tests/unit/CMakeFiles/test-protocol.dir/test-protocol.c.o" "gcc" "tests/unit/CMakeFiles/test-protocol.dir/test-protocol.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/wt/review-lib/build-asan/tests/unit/CMakeFiles/sdlive_test_harness.dir/DependInfo.cmake"
  "/work/wt/review-lib/build-asan/src/CMakeFiles/sdlive_internal.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
