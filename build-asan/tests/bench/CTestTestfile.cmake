# CMake generated Testfile for 
# Source directory: /work/wt/review-lib/tests/bench
# Build directory: /work/wt/review-lib/build-asan/tests/bench
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
add_test([=[bench-smoke]=] "/work/wt/review-lib/build-asan/tests/bench/sdlive-bench" "--iterations" "20000" "--trials" "20" "--scale" "0.1")
set_tests_properties([=[bench-smoke]=] PROPERTIES  LABELS "bench" TIMEOUT "60" _BACKTRACE_TRIPLES "/work/wt/review-lib/tests/bench/CMakeLists.txt;8;add_test;/work/wt/review-lib/tests/bench/CMakeLists.txt;0;")
