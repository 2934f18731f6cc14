
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt/coord/tests/jobs/jobs-bench.c" "tests/jobs/CMakeFiles/jobs-bench.dir/jobs-bench.c.o" "gcc" "tests/jobs/CMakeFiles/jobs-bench.dir/jobs-bench.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/wt/coord/build-rel/examples/coordinator/CMakeFiles/example_coordinator.dir/DependInfo.cmake"
  "/work/wt/coord/build-rel/examples/store/CMakeFiles/example_store.dir/DependInfo.cmake"
  "/work/wt/coord/build-rel/examples/frame/CMakeFiles/example_frame.dir/DependInfo.cmake"
  "/work/wt/coord/build-rel/examples/common/CMakeFiles/sdlive-examples-common.dir/DependInfo.cmake"
  "/work/wt/coord/build-rel/src/CMakeFiles/sdlive.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
