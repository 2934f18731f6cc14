file(REMOVE_RECURSE
  "CMakeFiles/example_frame.dir/frame.c.o"
  "CMakeFiles/example_frame.dir/frame.c.o.d"
  "CMakeFiles/example_frame.dir/frame_io.c.o"
  "CMakeFiles/example_frame.dir/frame_io.c.o.d"
  "libexample_frame.a"
  "libexample_frame.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/example_frame.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
