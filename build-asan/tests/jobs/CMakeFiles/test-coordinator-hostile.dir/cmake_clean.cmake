file(REMOVE_RECURSE
  "CMakeFiles/test-coordinator-hostile.dir/test-coordinator-hostile.c.o"
  "CMakeFiles/test-coordinator-hostile.dir/test-coordinator-hostile.c.o.d"
  "test-coordinator-hostile"
  "test-coordinator-hostile.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test-coordinator-hostile.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
