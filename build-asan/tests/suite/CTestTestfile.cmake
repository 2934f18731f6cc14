# CMake generated Testfile for 
# Source directory: /work/wt/review-lib/tests/suite
# Build directory: /work/wt/review-lib/build-asan/tests/suite
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
add_test([=[suite.tally]=] "bash" "/work/wt/review-lib/tests/suite/tally.sh")
set_tests_properties([=[suite.tally]=] PROPERTIES  LABELS "suite" TIMEOUT "60" _BACKTRACE_TRIPLES "/work/wt/review-lib/tests/suite/CMakeLists.txt;2;add_test;/work/wt/review-lib/tests/suite/CMakeLists.txt;0;")
add_test([=[suite.harness-durations]=] "bash" "/work/wt/review-lib/tests/suite/harness-durations.sh")
set_tests_properties([=[suite.harness-durations]=] PROPERTIES  LABELS "suite" TIMEOUT "60" _BACKTRACE_TRIPLES "/work/wt/review-lib/tests/suite/CMakeLists.txt;5;add_test;/work/wt/review-lib/tests/suite/CMakeLists.txt;0;")
