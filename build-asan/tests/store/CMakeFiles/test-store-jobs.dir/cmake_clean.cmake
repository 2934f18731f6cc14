file(REMOVE_RECURSE
  "CMakeFiles/test-store-jobs.dir/store-test-env.c.o"
  "CMakeFiles/test-store-jobs.dir/store-test-env.c.o.d"
  "CMakeFiles/test-store-jobs.dir/test-store-jobs.c.o"
  "CMakeFiles/test-store-jobs.dir/test-store-jobs.c.o.d"
  "test-store-jobs"
  "test-store-jobs.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test-store-jobs.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
