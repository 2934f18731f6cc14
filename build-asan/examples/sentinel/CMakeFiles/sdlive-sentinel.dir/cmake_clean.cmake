file(REMOVE_RECURSE
  "CMakeFiles/sdlive-sentinel.dir/main.c.o"
  "CMakeFiles/sdlive-sentinel.dir/main.c.o.d"
  "sdlive-sentinel"
  "sdlive-sentinel.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/sdlive-sentinel.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
