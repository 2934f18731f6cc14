file(REMOVE_RECURSE
  "CMakeFiles/sdlive-cluster-core.dir/coordinator_service.c.o"
  "CMakeFiles/sdlive-cluster-core.dir/coordinator_service.c.o.d"
  "CMakeFiles/sdlive-cluster-core.dir/election.c.o"
  "CMakeFiles/sdlive-cluster-core.dir/election.c.o.d"
  "CMakeFiles/sdlive-cluster-core.dir/health_gate.c.o"
  "CMakeFiles/sdlive-cluster-core.dir/health_gate.c.o.d"
  "CMakeFiles/sdlive-cluster-core.dir/leader.c.o"
  "CMakeFiles/sdlive-cluster-core.dir/leader.c.o.d"
  "CMakeFiles/sdlive-cluster-core.dir/lease.c.o"
  "CMakeFiles/sdlive-cluster-core.dir/lease.c.o.d"
  "CMakeFiles/sdlive-cluster-core.dir/maintenance.c.o"
  "CMakeFiles/sdlive-cluster-core.dir/maintenance.c.o.d"
  "libsdlive-cluster-core.a"
  "libsdlive-cluster-core.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/sdlive-cluster-core.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
