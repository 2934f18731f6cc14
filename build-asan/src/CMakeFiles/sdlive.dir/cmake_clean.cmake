file(REMOVE_RECURSE
  "libsdlive.pdb"
  "libsdlive.so"
  "libsdlive.so.0"
  "libsdlive.so.0.2.0"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/sdlive.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
