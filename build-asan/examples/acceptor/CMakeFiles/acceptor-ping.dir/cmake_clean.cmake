file(REMOVE_RECURSE
  "CMakeFiles/acceptor-ping.dir/ping.c.o"
  "CMakeFiles/acceptor-ping.dir/ping.c.o.d"
  "acceptor-ping"
  "acceptor-ping.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/acceptor-ping.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
