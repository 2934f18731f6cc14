# CMake generated Testfile for 
# Source directory: /work/wt/coord/tests/packaging
# Build directory: /work/wt/coord/build-asan/tests/packaging
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
add_test([=[man-lint]=] "sh" "/work/wt/coord/tests/packaging/man-lint.sh" "/work/wt/coord/build-asan/man/man8/sdlive-acceptor.8" "/work/wt/coord/build-asan/man/man8/sdlive-cleaner.8" "/work/wt/coord/build-asan/man/man8/sdlive-cluster.8" "/work/wt/coord/build-asan/man/man8/sdlive-sentinel.8" "/work/wt/coord/build-asan/man/man7/sdlive-units.7" "/work/wt/coord/build-asan/man/man8/sdlive-worker.8" "/work/wt/coord/build-asan/man/man3/sdlive.3" "/work/wt/coord/build-asan/man/man3/sdlive_idle.3" "/work/wt/coord/build-asan/man/man3/sdlive_new.3" "/work/wt/coord/build-asan/man/man3/sdlive_notify_fdstore.3" "/work/wt/coord/build-asan/man/man3/sdlive_notify_ready.3" "/work/wt/coord/build-asan/man/man3/sdlive_peer_new.3" "/work/wt/coord/build-asan/man/man3/sdlive_pet_watchdog.3" "/work/wt/coord/build-asan/man/man3/sdlive_progress_register.3")
set_tests_properties([=[man-lint]=] PROPERTIES  LABELS "man" TIMEOUT "60" _BACKTRACE_TRIPLES "/work/wt/coord/tests/packaging/CMakeLists.txt;6;add_test;/work/wt/coord/tests/packaging/CMakeLists.txt;0;")
add_test([=[man-exports]=] "sh" "/work/wt/coord/tests/packaging/man-exports.sh" "/work/wt/coord/build-asan" "/usr/local/share/man" "/work/wt/coord/build-asan/src/libsdlive.so.0.1.0")
set_tests_properties([=[man-exports]=] PROPERTIES  LABELS "man" RESOURCE_LOCK "sdlive-install" TIMEOUT "60" _BACKTRACE_TRIPLES "/work/wt/coord/tests/packaging/CMakeLists.txt;10;add_test;/work/wt/coord/tests/packaging/CMakeLists.txt;0;")
add_test([=[man-options-worker]=] "sh" "/work/wt/coord/tests/packaging/man-options.sh" "/work/wt/coord/build-asan/man/man8/sdlive-worker.8" "/work/wt/coord/build-asan/examples/worker/sdlive-worker")
set_tests_properties([=[man-options-worker]=] PROPERTIES  LABELS "man" TIMEOUT "30" _BACKTRACE_TRIPLES "/work/wt/coord/tests/packaging/CMakeLists.txt;20;add_test;/work/wt/coord/tests/packaging/CMakeLists.txt;0;")
add_test([=[man-options-cleaner]=] "sh" "/work/wt/coord/tests/packaging/man-options.sh" "/work/wt/coord/build-asan/man/man8/sdlive-cleaner.8" "/work/wt/coord/build-asan/examples/cleaner/sdlive-cleaner")
set_tests_properties([=[man-options-cleaner]=] PROPERTIES  LABELS "man" TIMEOUT "30" _BACKTRACE_TRIPLES "/work/wt/coord/tests/packaging/CMakeLists.txt;20;add_test;/work/wt/coord/tests/packaging/CMakeLists.txt;0;")
add_test([=[man-options-sentinel]=] "sh" "/work/wt/coord/tests/packaging/man-options.sh" "/work/wt/coord/build-asan/man/man8/sdlive-sentinel.8" "/work/wt/coord/build-asan/examples/sentinel/sdlive-sentinel")
set_tests_properties([=[man-options-sentinel]=] PROPERTIES  LABELS "man" TIMEOUT "30" _BACKTRACE_TRIPLES "/work/wt/coord/tests/packaging/CMakeLists.txt;20;add_test;/work/wt/coord/tests/packaging/CMakeLists.txt;0;")
add_test([=[man-options-acceptor]=] "sh" "/work/wt/coord/tests/packaging/man-options.sh" "/work/wt/coord/build-asan/man/man8/sdlive-acceptor.8" "/work/wt/coord/build-asan/examples/acceptor/sdlive-acceptor")
set_tests_properties([=[man-options-acceptor]=] PROPERTIES  LABELS "man" TIMEOUT "30" _BACKTRACE_TRIPLES "/work/wt/coord/tests/packaging/CMakeLists.txt;20;add_test;/work/wt/coord/tests/packaging/CMakeLists.txt;0;")
add_test([=[man-options-cluster]=] "sh" "/work/wt/coord/tests/packaging/man-options.sh" "/work/wt/coord/build-asan/man/man8/sdlive-cluster.8" "/work/wt/coord/build-asan/examples/cluster/sdlive-cluster")
set_tests_properties([=[man-options-cluster]=] PROPERTIES  LABELS "man" TIMEOUT "30" _BACKTRACE_TRIPLES "/work/wt/coord/tests/packaging/CMakeLists.txt;20;add_test;/work/wt/coord/tests/packaging/CMakeLists.txt;0;")
add_test([=[man-units]=] "sh" "/work/wt/coord/tests/packaging/man-units.sh" "/work/wt/coord/build-asan/man/man7/sdlive-units.7" "/work/wt/coord/build-asan/units")
set_tests_properties([=[man-units]=] PROPERTIES  LABELS "man" TIMEOUT "30" _BACKTRACE_TRIPLES "/work/wt/coord/tests/packaging/CMakeLists.txt;28;add_test;/work/wt/coord/tests/packaging/CMakeLists.txt;0;")
