file(REMOVE_RECURSE
  "CMakeFiles/sdlive-worker.dir/coordinator_link.c.o"
  "CMakeFiles/sdlive-worker.dir/coordinator_link.c.o.d"
  "CMakeFiles/sdlive-worker.dir/executor.c.o"
  "CMakeFiles/sdlive-worker.dir/executor.c.o.d"
  "CMakeFiles/sdlive-worker.dir/job.c.o"
  "CMakeFiles/sdlive-worker.dir/job.c.o.d"
  "CMakeFiles/sdlive-worker.dir/jobmode.c.o"
  "CMakeFiles/sdlive-worker.dir/jobmode.c.o.d"
  "CMakeFiles/sdlive-worker.dir/main.c.o"
  "CMakeFiles/sdlive-worker.dir/main.c.o.d"
  "sdlive-worker"
  "sdlive-worker.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/sdlive-worker.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
