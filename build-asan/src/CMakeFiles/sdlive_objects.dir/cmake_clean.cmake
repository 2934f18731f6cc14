file(REMOVE_RECURSE
  "CMakeFiles/sdlive_objects.dir/barrier.c.o"
  "CMakeFiles/sdlive_objects.dir/barrier.c.o.d"
  "CMakeFiles/sdlive_objects.dir/clock.c.o"
  "CMakeFiles/sdlive_objects.dir/clock.c.o.d"
  "CMakeFiles/sdlive_objects.dir/env.c.o"
  "CMakeFiles/sdlive_objects.dir/env.c.o.d"
  "CMakeFiles/sdlive_objects.dir/fdstore.c.o"
  "CMakeFiles/sdlive_objects.dir/fdstore.c.o.d"
  "CMakeFiles/sdlive_objects.dir/idle.c.o"
  "CMakeFiles/sdlive_objects.dir/idle.c.o.d"
  "CMakeFiles/sdlive_objects.dir/notify-address.c.o"
  "CMakeFiles/sdlive_objects.dir/notify-address.c.o.d"
  "CMakeFiles/sdlive_objects.dir/notify-fields.c.o"
  "CMakeFiles/sdlive_objects.dir/notify-fields.c.o.d"
  "CMakeFiles/sdlive_objects.dir/notify.c.o"
  "CMakeFiles/sdlive_objects.dir/notify.c.o.d"
  "CMakeFiles/sdlive_objects.dir/peer.c.o"
  "CMakeFiles/sdlive_objects.dir/peer.c.o.d"
  "CMakeFiles/sdlive_objects.dir/progress.c.o"
  "CMakeFiles/sdlive_objects.dir/progress.c.o.d"
  "CMakeFiles/sdlive_objects.dir/sdlive.c.o"
  "CMakeFiles/sdlive_objects.dir/sdlive.c.o.d"
  "CMakeFiles/sdlive_objects.dir/status.c.o"
  "CMakeFiles/sdlive_objects.dir/status.c.o.d"
  "CMakeFiles/sdlive_objects.dir/watchdog.c.o"
  "CMakeFiles/sdlive_objects.dir/watchdog.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/sdlive_objects.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
