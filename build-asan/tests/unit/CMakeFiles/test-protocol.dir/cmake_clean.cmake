file(REMOVE_RECURSE
  "CMakeFiles/test-protocol.dir/test-protocol.c.o"
  "CMakeFiles/test-protocol.dir/test-protocol.c.o.d"
  "test-protocol"
  "test-protocol.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test-protocol.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
