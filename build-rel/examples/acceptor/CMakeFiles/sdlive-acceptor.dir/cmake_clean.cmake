file(REMOVE_RECURSE
  "CMakeFiles/sdlive-acceptor.dir/clients.c.o"
  "CMakeFiles/sdlive-acceptor.dir/clients.c.o.d"
  "CMakeFiles/sdlive-acceptor.dir/listener.c.o"
  "CMakeFiles/sdlive-acceptor.dir/listener.c.o.d"
  "CMakeFiles/sdlive-acceptor.dir/main.c.o"
  "CMakeFiles/sdlive-acceptor.dir/main.c.o.d"
  "sdlive-acceptor"
  "sdlive-acceptor.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/sdlive-acceptor.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
