# CMake generated Testfile for 
# Source directory: /work/wt/coord/tests/install
# Build directory: /work/wt/coord/build-rel/tests/install
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
add_test([=[install-consumer]=] "sh" "/work/wt/coord/tests/install/install-consumer.sh" "/work/wt/coord/build-rel" "/work/wt/coord/tests/install/consumer" "/usr/bin/cc" "")
set_tests_properties([=[install-consumer]=] PROPERTIES  LABELS "install" RESOURCE_LOCK "sdlive-install" TIMEOUT "180" _BACKTRACE_TRIPLES "/work/wt/coord/tests/install/CMakeLists.txt;12;add_test;/work/wt/coord/tests/install/CMakeLists.txt;0;")
add_test([=[exports]=] "sh" "/work/wt/coord/tests/check-exports.sh" "/work/wt/coord/build-rel/src/libsdlive.so.0.1.0" "/work/wt/coord/src/libsdlive.sym" "/work/wt/coord/include/sdlive.h" "/usr/bin/cc")
set_tests_properties([=[exports]=] PROPERTIES  LABELS "install" _BACKTRACE_TRIPLES "/work/wt/coord/tests/install/CMakeLists.txt;19;add_test;/work/wt/coord/tests/install/CMakeLists.txt;0;")
add_test([=[header-c99-cxx]=] "sh" "/work/wt/coord/tests/install/check-header.sh" "/work/wt/coord/include" "/usr/bin/cc" "/usr/bin/c++")
set_tests_properties([=[header-c99-cxx]=] PROPERTIES  LABELS "install" _BACKTRACE_TRIPLES "/work/wt/coord/tests/install/CMakeLists.txt;25;add_test;/work/wt/coord/tests/install/CMakeLists.txt;0;")
add_test([=[install-prefix]=] "sh" "/work/wt/coord/tests/install/install-prefix.sh" "/work/wt/coord/build-rel" "/work/wt/coord/tests/install/consumer" "/usr/bin/cc" "")
set_tests_properties([=[install-prefix]=] PROPERTIES  LABELS "install" RESOURCE_LOCK "sdlive-install" TIMEOUT "180" _BACKTRACE_TRIPLES "/work/wt/coord/tests/install/CMakeLists.txt;31;add_test;/work/wt/coord/tests/install/CMakeLists.txt;0;")
