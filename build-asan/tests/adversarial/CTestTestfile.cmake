# CMake generated Testfile for 
# Source directory: /work/wt/coord/tests/adversarial
# Build directory: /work/wt/coord/build-asan/tests/adversarial
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
add_test([=[adversarial-socket-symlink-race]=] "/work/wt/coord/build-asan/tests/adversarial/adversarial-socket-symlink-race")
set_tests_properties([=[adversarial-socket-symlink-race]=] PROPERTIES  LABELS "adversarial;coordinator" SKIP_RETURN_CODE "77" TIMEOUT "180" _BACKTRACE_TRIPLES "/work/wt/coord/tests/adversarial/CMakeLists.txt;17;add_test;/work/wt/coord/tests/adversarial/CMakeLists.txt;27;adversarial_test;/work/wt/coord/tests/adversarial/CMakeLists.txt;0;")
