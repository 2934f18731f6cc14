file(REMOVE_RECURSE
  "CMakeFiles/jobs-inspect.dir/jobs-inspect.c.o"
  "CMakeFiles/jobs-inspect.dir/jobs-inspect.c.o.d"
  "jobs-inspect"
  "jobs-inspect.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/jobs-inspect.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
