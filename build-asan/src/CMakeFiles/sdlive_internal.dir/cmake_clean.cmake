file(REMOVE_RECURSE
  "libsdlive_internal.a"
  "libsdlive_internal.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/sdlive_internal.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
