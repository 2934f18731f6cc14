file(REMOVE_RECURSE
  "CMakeFiles/sdlive_test_harness.dir/harness.c.o"
  "CMakeFiles/sdlive_test_harness.dir/harness.c.o.d"
  "libsdlive_test_harness.a"
  "libsdlive_test_harness.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/sdlive_test_harness.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
