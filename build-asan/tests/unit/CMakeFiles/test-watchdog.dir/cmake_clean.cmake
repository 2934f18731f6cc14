file(REMOVE_RECURSE
  "CMakeFiles/test-watchdog.dir/test-watchdog.c.o"
  "CMakeFiles/test-watchdog.dir/test-watchdog.c.o.d"
  "test-watchdog"
  "test-watchdog.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test-watchdog.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
