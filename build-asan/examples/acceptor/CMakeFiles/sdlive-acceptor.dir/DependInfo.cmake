
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt/coord/examples/acceptor/clients.c" "examples/acceptor/CMakeFiles/sdlive-acceptor.dir/clients.c.o" "gcc" "examples/acceptor/CMakeFiles/sdlive-acceptor.dir/clients.c.o.d"
  "/work/wt/coord/examples/acceptor/listener.c" "examples/acceptor/CMakeFiles/sdlive-acceptor.dir/listener.c.o" "gcc" "examples/acceptor/CMakeFiles/sdlive-acceptor.dir/listener.c.o.d"
  "/work/wt/coord/examples/acceptor/main.c" "examples/acceptor/CMakeFiles/sdlive-acceptor.dir/main.c.o" "gcc" "examples/acceptor/CMakeFiles/sdlive-acceptor.dir/main.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/wt/coord/build-asan/examples/common/CMakeFiles/sdlive-examples-common.dir/DependInfo.cmake"
  "/work/wt/coord/build-asan/src/CMakeFiles/sdlive.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
