file(REMOVE_RECURSE
  "CMakeFiles/fuzz-replay.dir/__/__/examples/frame/frame.c.o"
  "CMakeFiles/fuzz-replay.dir/__/__/examples/frame/frame.c.o.d"
  "CMakeFiles/fuzz-replay.dir/fuzz-frame-decoder.c.o"
  "CMakeFiles/fuzz-replay.dir/fuzz-frame-decoder.c.o.d"
  "CMakeFiles/fuzz-replay.dir/fuzz-replay.c.o"
  "CMakeFiles/fuzz-replay.dir/fuzz-replay.c.o.d"
  "fuzz-replay"
  "fuzz-replay.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/fuzz-replay.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
