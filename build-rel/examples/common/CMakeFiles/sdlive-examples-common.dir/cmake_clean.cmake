file(REMOVE_RECURSE
  "CMakeFiles/sdlive-examples-common.dir/cli.c.o"
  "CMakeFiles/sdlive-examples-common.dir/cli.c.o.d"
  "CMakeFiles/sdlive-examples-common.dir/duration.c.o"
  "CMakeFiles/sdlive-examples-common.dir/duration.c.o.d"
  "CMakeFiles/sdlive-examples-common.dir/fault.c.o"
  "CMakeFiles/sdlive-examples-common.dir/fault.c.o.d"
  "CMakeFiles/sdlive-examples-common.dir/log.c.o"
  "CMakeFiles/sdlive-examples-common.dir/log.c.o.d"
  "CMakeFiles/sdlive-examples-common.dir/monitor.c.o"
  "CMakeFiles/sdlive-examples-common.dir/monitor.c.o.d"
  "CMakeFiles/sdlive-examples-common.dir/supervision.c.o"
  "CMakeFiles/sdlive-examples-common.dir/supervision.c.o.d"
  "CMakeFiles/sdlive-examples-common.dir/trusted_dir.c.o"
  "CMakeFiles/sdlive-examples-common.dir/trusted_dir.c.o.d"
  "libsdlive-examples-common.a"
  "libsdlive-examples-common.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/sdlive-examples-common.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
