file(REMOVE_RECURSE
  "CMakeFiles/test-notify.dir/test-notify.c.o"
  "CMakeFiles/test-notify.dir/test-notify.c.o.d"
  "test-notify"
  "test-notify.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test-notify.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
