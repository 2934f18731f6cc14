file(REMOVE_RECURSE
  "CMakeFiles/sdlive-bench.dir/sdlive-bench.c.o"
  "CMakeFiles/sdlive-bench.dir/sdlive-bench.c.o.d"
  "sdlive-bench"
  "sdlive-bench.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/sdlive-bench.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
