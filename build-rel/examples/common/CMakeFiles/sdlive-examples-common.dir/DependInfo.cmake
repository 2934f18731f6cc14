
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt/coord/examples/common/cli.c" "examples/common/CMakeFiles/sdlive-examples-common.dir/cli.c.o" "gcc" "examples/common/CMakeFiles/sdlive-examples-common.dir/cli.c.o.d"
  "/work/wt/coord/examples/common/duration.c" "examples/common/CMakeFiles/sdlive-examples-common.dir/duration.c.o" "gcc" "examples/common/CMakeFiles/sdlive-examples-common.dir/duration.c.o.d"
  "/work/wt/coord/examples/common/fault.c" "examples/common/CMakeFiles/sdlive-examples-common.dir/fault.c.o" "gcc" "examples/common/CMakeFiles/sdlive-examples-common.dir/fault.c.o.d"
  "/work/wt/coord/examples/common/log.c" "examples/common/CMakeFiles/sdlive-examples-common.dir/log.c.o" "gcc" "examples/common/CMakeFiles/sdlive-examples-common.dir/log.c.o.d"
  "/work/wt/coord/examples/common/monitor.c" "examples/common/CMakeFiles/sdlive-examples-common.dir/monitor.c.o" "gcc" "examples/common/CMakeFiles/sdlive-examples-common.dir/monitor.c.o.d"
  "/work/wt/coord/examples/common/supervision.c" "examples/common/CMakeFiles/sdlive-examples-common.dir/supervision.c.o" "gcc" "examples/common/CMakeFiles/sdlive-examples-common.dir/supervision.c.o.d"
  "/work/wt/coord/examples/common/trusted_dir.c" "examples/common/CMakeFiles/sdlive-examples-common.dir/trusted_dir.c.o" "gcc" "examples/common/CMakeFiles/sdlive-examples-common.dir/trusted_dir.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/wt/coord/build-rel/src/CMakeFiles/sdlive.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
