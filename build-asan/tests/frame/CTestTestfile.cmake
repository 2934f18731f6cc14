# CMake generated Testfile for 
# Source directory: /work/wt/coord/tests/frame
# Build directory: /work/wt/coord/build-asan/tests/frame
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
add_test([=[frame]=] "/work/wt/coord/build-asan/tests/frame/test-frame")
set_tests_properties([=[frame]=] PROPERTIES  LABELS "unit" TIMEOUT "30" _BACKTRACE_TRIPLES "/work/wt/coord/tests/frame/CMakeLists.txt;8;add_test;/work/wt/coord/tests/frame/CMakeLists.txt;0;")
