file(REMOVE_RECURSE
  "CMakeFiles/frame-seeds.dir/__/__/examples/frame/frame.c.o"
  "CMakeFiles/frame-seeds.dir/__/__/examples/frame/frame.c.o.d"
  "CMakeFiles/frame-seeds.dir/frame-seeds.c.o"
  "CMakeFiles/frame-seeds.dir/frame-seeds.c.o.d"
  "frame-seeds"
  "frame-seeds.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/frame-seeds.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
