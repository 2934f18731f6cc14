file(REMOVE_RECURSE
  "CMakeFiles/sdlive-cleaner.dir/main.c.o"
  "CMakeFiles/sdlive-cleaner.dir/main.c.o.d"
  "CMakeFiles/sdlive-cleaner.dir/pass.c.o"
  "CMakeFiles/sdlive-cleaner.dir/pass.c.o.d"
  "CMakeFiles/sdlive-cleaner.dir/populate.c.o"
  "CMakeFiles/sdlive-cleaner.dir/populate.c.o.d"
  "sdlive-cleaner"
  "sdlive-cleaner.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/sdlive-cleaner.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
