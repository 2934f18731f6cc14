file(REMOVE_RECURSE
  "CMakeFiles/jobs-faults.dir/jobs-faults.c.o"
  "CMakeFiles/jobs-faults.dir/jobs-faults.c.o.d"
  "jobs-faults"
  "jobs-faults.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/jobs-faults.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
