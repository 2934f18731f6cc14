# CMake generated Testfile for 
# Source directory: /work/wt/coord/tests/store
# Build directory: /work/wt/coord/build-asan/tests/store
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
add_test([=[store-sqlite]=] "/work/wt/coord/build-asan/tests/store/test-store" "sqlite")
set_tests_properties([=[store-sqlite]=] PROPERTIES  LABELS "store" TIMEOUT "60" _BACKTRACE_TRIPLES "/work/wt/coord/tests/store/CMakeLists.txt;13;add_test;/work/wt/coord/tests/store/CMakeLists.txt;0;")
add_test([=[store-jobs-sqlite]=] "/work/wt/coord/build-asan/tests/store/test-store-jobs" "sqlite")
set_tests_properties([=[store-jobs-sqlite]=] PROPERTIES  LABELS "store;jobs" TIMEOUT "60" _BACKTRACE_TRIPLES "/work/wt/coord/tests/store/CMakeLists.txt;22;add_test;/work/wt/coord/tests/store/CMakeLists.txt;0;")
add_test([=[store-pg-server-start]=] "/work/wt/coord/tests/store/pg-server.sh" "start" "/work/wt/coord/build-asan/tests/store")
set_tests_properties([=[store-pg-server-start]=] PROPERTIES  FIXTURES_SETUP "store_pg" LABELS "store" TIMEOUT "60" _BACKTRACE_TRIPLES "/work/wt/coord/tests/store/CMakeLists.txt;28;add_test;/work/wt/coord/tests/store/CMakeLists.txt;0;")
add_test([=[store-pg-server-stop]=] "/work/wt/coord/tests/store/pg-server.sh" "stop" "/work/wt/coord/build-asan/tests/store")
set_tests_properties([=[store-pg-server-stop]=] PROPERTIES  FIXTURES_CLEANUP "store_pg" LABELS "store" TIMEOUT "60" _BACKTRACE_TRIPLES "/work/wt/coord/tests/store/CMakeLists.txt;29;add_test;/work/wt/coord/tests/store/CMakeLists.txt;0;")
add_test([=[store-postgresql]=] "/work/wt/coord/build-asan/tests/store/test-store" "postgresql" "/work/wt/coord/tests/store/pg-server.sh" "/work/wt/coord/build-asan/tests/store")
set_tests_properties([=[store-postgresql]=] PROPERTIES  FIXTURES_REQUIRED "store_pg" LABELS "store" TIMEOUT "90" _BACKTRACE_TRIPLES "/work/wt/coord/tests/store/CMakeLists.txt;30;add_test;/work/wt/coord/tests/store/CMakeLists.txt;0;")
add_test([=[store-jobs-postgresql]=] "/work/wt/coord/build-asan/tests/store/test-store-jobs" "postgresql" "/work/wt/coord/tests/store/pg-server.sh" "/work/wt/coord/build-asan/tests/store")
set_tests_properties([=[store-jobs-postgresql]=] PROPERTIES  FIXTURES_REQUIRED "store_pg" LABELS "store;jobs;postgresql" TIMEOUT "90" _BACKTRACE_TRIPLES "/work/wt/coord/tests/store/CMakeLists.txt;34;add_test;/work/wt/coord/tests/store/CMakeLists.txt;0;")
