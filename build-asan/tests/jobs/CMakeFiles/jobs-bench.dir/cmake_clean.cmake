file(REMOVE_RECURSE
  "CMakeFiles/jobs-bench.dir/jobs-bench.c.o"
  "CMakeFiles/jobs-bench.dir/jobs-bench.c.o.d"
  "jobs-bench"
  "jobs-bench.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/jobs-bench.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
