file(REMOVE_RECURSE
  "CMakeFiles/example_coordinator.dir/conn.c.o"
  "CMakeFiles/example_coordinator.dir/conn.c.o.d"
  "CMakeFiles/example_coordinator.dir/coordinator.c.o"
  "CMakeFiles/example_coordinator.dir/coordinator.c.o.d"
  "CMakeFiles/example_coordinator.dir/listen.c.o"
  "CMakeFiles/example_coordinator.dir/listen.c.o.d"
  "CMakeFiles/example_coordinator.dir/writer.c.o"
  "CMakeFiles/example_coordinator.dir/writer.c.o.d"
  "libexample_coordinator.a"
  "libexample_coordinator.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/example_coordinator.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
