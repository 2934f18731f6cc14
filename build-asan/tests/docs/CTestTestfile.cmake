# CMake generated Testfile for 
# Source directory: /work/wt/review-lib/tests/docs
# Build directory: /work/wt/review-lib/build-asan/tests/docs
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
add_test([=[docs-c-blocks]=] "sh" "/work/wt/review-lib/tests/docs/compile-blocks.sh" "/usr/bin/cc" "/work/wt/review-lib/include" "/work/wt/review-lib/README.md" "/work/wt/review-lib/docs/api.md" "/work/wt/review-lib/docs/cluster.md" "/work/wt/review-lib/docs/daemons.md" "/work/wt/review-lib/docs/integration.md" "/work/wt/review-lib/docs/jobs.md" "/work/wt/review-lib/docs/operator.md" "/work/wt/review-lib/docs/packaging.md" "/work/wt/review-lib/docs/performance.md" "/work/wt/review-lib/docs/protocol.md" "/work/wt/review-lib/docs/security.md" "/work/wt/review-lib/docs/store.md" "/work/wt/review-lib/docs/unit-tests.md")
set_tests_properties([=[docs-c-blocks]=] PROPERTIES  LABELS "docs" TIMEOUT "120" _BACKTRACE_TRIPLES "/work/wt/review-lib/tests/docs/CMakeLists.txt;4;add_test;/work/wt/review-lib/tests/docs/CMakeLists.txt;0;")
