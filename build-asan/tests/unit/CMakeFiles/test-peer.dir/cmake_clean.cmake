file(REMOVE_RECURSE
  "CMakeFiles/test-peer.dir/test-peer.c.o"
  "CMakeFiles/test-peer.dir/test-peer.c.o.d"
  "test-peer"
  "test-peer.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test-peer.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
