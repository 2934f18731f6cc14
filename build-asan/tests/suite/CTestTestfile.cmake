# CMake generated Testfile for 
# Source directory: /work/wt/coord/tests/suite
# Build directory: /work/wt/coord/build-asan/tests/suite
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
add_test([=[suite.tally]=] "bash" "/work/wt/coord/tests/suite/tally.sh")
set_tests_properties([=[suite.tally]=] PROPERTIES  LABELS "suite" TIMEOUT "60" _BACKTRACE_TRIPLES "/work/wt/coord/tests/suite/CMakeLists.txt;2;add_test;/work/wt/coord/tests/suite/CMakeLists.txt;0;")
