
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt/review-lib/src/barrier.c" "src/CMakeFiles/sdlive_objects.dir/barrier.c.o" "gcc" "src/CMakeFiles/sdlive_objects.dir/barrier.c.o.d"
  "/work/wt/review-lib/src/clock.c" "src/CMakeFiles/sdlive_objects.dir/clock.c.o" "gcc" "src/CMakeFiles/sdlive_objects.dir/clock.c.o.d"
  "/work/wt/review-lib/src/env.c" "src/CMakeFiles/sdlive_objects.dir/env.c.o" "gcc" "src/CMakeFiles/sdlive_objects.dir/env.c.o.d"
  "/work/wt/review-lib/src/fdstore.c" "src/CMakeFiles/sdlive_objects.dir/fdstore.c.o" "gcc" "src/CMakeFiles/sdlive_objects.dir/fdstore.c.o.d"
  "/work/wt/review-lib/src/idle.c" "src/CMakeFiles/sdlive_objects.dir/idle.c.o" "gcc" "src/CMakeFiles/sdlive_objects.dir/idle.c.o.d"
  "/work/wt/review-lib/src/notify-address.c" "src/CMakeFiles/sdlive_objects.dir/notify-address.c.o" "gcc" "src/CMakeFiles/sdlive_objects.dir/notify-address.c.o.d"
  "/work/wt/review-lib/src/notify-fields.c" "src/CMakeFiles/sdlive_objects.dir/notify-fields.c.o" "gcc" "src/CMakeFiles/sdlive_objects.dir/notify-fields.c.o.d"
  "/work/wt/review-lib/src/notify.c" "src/CMakeFiles/sdlive_objects.dir/notify.c.o" "gcc" "src/CMakeFiles/sdlive_objects.dir/notify.c.o.d"
  "/work/wt/review-lib/src/peer.c" "src/CMakeFiles/sdlive_objects.dir/peer.c.o" "gcc" "src/CMakeFiles/sdlive_objects.dir/peer.c.o.d"
  "/work/wt/review-lib/src/progress.c" "src/CMakeFiles/sdlive_objects.dir/progress.c.o" "gcc" "src/CMakeFiles/sdlive_objects.dir/progress.c.o.d"
  "/work/wt/review-lib/src/sdlive.c" "src/CMakeFiles/sdlive_objects.dir/sdlive.c.o" "gcc" "src/CMakeFiles/sdlive_objects.dir/sdlive.c.o.d"
  "/work/wt/review-lib/src/status.c" "src/CMakeFiles/sdlive_objects.dir/status.c.o" "gcc" "src/CMakeFiles/sdlive_objects.dir/status.c.o.d"
  "/work/wt/review-lib/src/watchdog.c" "src/CMakeFiles/sdlive_objects.dir/watchdog.c.o" "gcc" "src/CMakeFiles/sdlive_objects.dir/watchdog.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
