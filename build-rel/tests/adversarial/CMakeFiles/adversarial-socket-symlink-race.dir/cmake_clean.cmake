file(REMOVE_RECURSE
  "CMakeFiles/adversarial-socket-symlink-race.dir/socket-symlink-race.c.o"
  "CMakeFiles/adversarial-socket-symlink-race.dir/socket-symlink-race.c.o.d"
  "adversarial-socket-symlink-race"
  "adversarial-socket-symlink-race.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/adversarial-socket-symlink-race.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
