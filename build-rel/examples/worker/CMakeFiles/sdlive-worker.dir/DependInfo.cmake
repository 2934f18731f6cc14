
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt/coord/examples/worker/coordinator_link.c" "examples/worker/CMakeFiles/sdlive-worker.dir/coordinator_link.c.o" "gcc" "examples/worker/CMakeFiles/sdlive-worker.dir/coordinator_link.c.o.d"
  "/work/wt/coord/examples/worker/executor.c" "examples/worker/CMakeFiles/sdlive-worker.dir/executor.c.o" "gcc" "examples/worker/CMakeFiles/sdlive-worker.dir/executor.c.o.d"
  "/work/wt/coord/examples/worker/job.c" "examples/worker/CMakeFiles/sdlive-worker.dir/job.c.o" "gcc" "examples/worker/CMakeFiles/sdlive-worker.dir/job.c.o.d"
  "/work/wt/coord/examples/worker/jobmode.c" "examples/worker/CMakeFiles/sdlive-worker.dir/jobmode.c.o" "gcc" "examples/worker/CMakeFiles/sdlive-worker.dir/jobmode.c.o.d"
  "/work/wt/coord/examples/worker/main.c" "examples/worker/CMakeFiles/sdlive-worker.dir/main.c.o" "gcc" "examples/worker/CMakeFiles/sdlive-worker.dir/main.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/wt/coord/build-rel/examples/common/CMakeFiles/sdlive-examples-common.dir/DependInfo.cmake"
  "/work/wt/coord/build-rel/examples/frame/CMakeFiles/example_frame.dir/DependInfo.cmake"
  "/work/wt/coord/build-rel/src/CMakeFiles/sdlive.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
