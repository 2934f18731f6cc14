# CMake generated Testfile for 
# Source directory: /work/wt/review-lib/tests/install
# Build directory: /work/wt/review-lib/build-asan/tests/install
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
add_test([=[install-consumer]=] "sh" "/work/wt/review-lib/tests/install/install-consumer.sh" "/work/wt/review-lib/build-asan" "/work/wt/review-lib/tests/install/consumer" "/usr/bin/cc" "-fsanitize=address,undefined")
set_tests_properties([=[install-consumer]=] PROPERTIES  LABELS "install" RESOURCE_LOCK "sdlive-install" TIMEOUT "180" _BACKTRACE_TRIPLES "/work/wt/review-lib/tests/install/CMakeLists.txt;12;add_test;/work/wt/review-lib/tests/install/CMakeLists.txt;0;")
add_test([=[exports]=] "sh" "/work/wt/review-lib/tests/check-exports.sh" "/work/wt/review-lib/build-asan/src/libsdlive.so.0.2.0" "/work/wt/review-lib/src/libsdlive.sym" "/work/wt/review-lib/include/sdlive.h" "/usr/bin/cc")
set_tests_properties([=[exports]=] PROPERTIES  LABELS "install" _BACKTRACE_TRIPLES "/work/wt/review-lib/tests/install/CMakeLists.txt;19;add_test;/work/wt/review-lib/tests/install/CMakeLists.txt;0;")
add_test([=[header-c99-cxx]=] "sh" "/work/wt/review-lib/tests/install/check-header.sh" "/work/wt/review-lib/include" "/usr/bin/cc" "/usr/bin/c++")
set_tests_properties([=[header-c99-cxx]=] PROPERTIES  LABELS "install" _BACKTRACE_TRIPLES "/work/wt/review-lib/tests/install/CMakeLists.txt;25;add_test;/work/wt/review-lib/tests/install/CMakeLists.txt;0;")
