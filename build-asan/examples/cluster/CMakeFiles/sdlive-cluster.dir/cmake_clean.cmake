file(REMOVE_RECURSE
  "CMakeFiles/sdlive-cluster.dir/main.c.o"
  "CMakeFiles/sdlive-cluster.dir/main.c.o.d"
  "sdlive-cluster"
  "sdlive-cluster.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/sdlive-cluster.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
