# CMake generated Testfile for 
# Source directory: /work/wt/coord/tests/fuzz
# Build directory: /work/wt/coord/build-asan/tests/fuzz
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
add_test([=[frame_fuzz_seeds]=] "/work/wt/coord/build-asan/tests/fuzz/frame-seeds" "/work/wt/coord/build-asan/tests/fuzz/frame-seed-corpus")
set_tests_properties([=[frame_fuzz_seeds]=] PROPERTIES  FIXTURES_SETUP "frame_fuzz_seeds" LABELS "unit" TIMEOUT "30" _BACKTRACE_TRIPLES "/work/wt/coord/tests/fuzz/CMakeLists.txt;12;add_test;/work/wt/coord/tests/fuzz/CMakeLists.txt;0;")
add_test([=[frame_fuzz_replay]=] "/work/wt/coord/build-asan/tests/fuzz/fuzz-replay" "/work/wt/coord/build-asan/tests/fuzz/frame-seed-corpus")
set_tests_properties([=[frame_fuzz_replay]=] PROPERTIES  FIXTURES_REQUIRED "frame_fuzz_seeds" LABELS "unit" TIMEOUT "30" _BACKTRACE_TRIPLES "/work/wt/coord/tests/fuzz/CMakeLists.txt;18;add_test;/work/wt/coord/tests/fuzz/CMakeLists.txt;0;")
