# CMake generated Testfile for 
# Source directory: /work/wt/coord/tests/jobs
# Build directory: /work/wt/coord/build-asan/tests/jobs
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
add_test([=[coordinator]=] "/work/wt/coord/build-asan/tests/jobs/test-coordinator")
set_tests_properties([=[coordinator]=] PROPERTIES  LABELS "unit;jobs;thread" TIMEOUT "60" _BACKTRACE_TRIPLES "/work/wt/coord/tests/jobs/CMakeLists.txt;9;add_test;/work/wt/coord/tests/jobs/CMakeLists.txt;0;")
add_test([=[coordinator-hostile]=] "/work/wt/coord/build-asan/tests/jobs/test-coordinator-hostile")
set_tests_properties([=[coordinator-hostile]=] PROPERTIES  LABELS "unit;jobs;adversarial" TIMEOUT "120" _BACKTRACE_TRIPLES "/work/wt/coord/tests/jobs/CMakeLists.txt;16;add_test;/work/wt/coord/tests/jobs/CMakeLists.txt;0;")
add_test([=[coordinator-link]=] "/work/wt/coord/build-asan/tests/jobs/test-coordinator-link")
set_tests_properties([=[coordinator-link]=] PROPERTIES  LABELS "unit;jobs;thread" TIMEOUT "60" _BACKTRACE_TRIPLES "/work/wt/coord/tests/jobs/CMakeLists.txt;26;add_test;/work/wt/coord/tests/jobs/CMakeLists.txt;0;")
add_test([=[jobs-kill]=] "/work/wt/coord/build-asan/tests/jobs/jobs-faults" "--cluster" "/work/wt/coord/build-asan/examples/cluster/sdlive-cluster" "--worker" "/work/wt/coord/build-asan/examples/worker/sdlive-worker" "--scenario" "kill" "--jobs" "1000" "--workers" "3")
set_tests_properties([=[jobs-kill]=] PROPERTIES  LABELS "jobs" RUN_SERIAL "TRUE" TIMEOUT "120" _BACKTRACE_TRIPLES "/work/wt/coord/tests/jobs/CMakeLists.txt;41;add_test;/work/wt/coord/tests/jobs/CMakeLists.txt;0;")
add_test([=[jobs-stop]=] "/work/wt/coord/build-asan/tests/jobs/jobs-faults" "--cluster" "/work/wt/coord/build-asan/examples/cluster/sdlive-cluster" "--worker" "/work/wt/coord/build-asan/examples/worker/sdlive-worker" "--scenario" "stop" "--jobs" "1000" "--workers" "3")
set_tests_properties([=[jobs-stop]=] PROPERTIES  LABELS "jobs" RUN_SERIAL "TRUE" TIMEOUT "120" _BACKTRACE_TRIPLES "/work/wt/coord/tests/jobs/CMakeLists.txt;41;add_test;/work/wt/coord/tests/jobs/CMakeLists.txt;0;")
add_test([=[jobs-wedge]=] "/work/wt/coord/build-asan/tests/jobs/jobs-faults" "--cluster" "/work/wt/coord/build-asan/examples/cluster/sdlive-cluster" "--worker" "/work/wt/coord/build-asan/examples/worker/sdlive-worker" "--scenario" "wedge" "--jobs" "1000" "--workers" "3")
set_tests_properties([=[jobs-wedge]=] PROPERTIES  LABELS "jobs" RUN_SERIAL "TRUE" TIMEOUT "120" _BACKTRACE_TRIPLES "/work/wt/coord/tests/jobs/CMakeLists.txt;41;add_test;/work/wt/coord/tests/jobs/CMakeLists.txt;0;")
add_test([=[jobs-failover]=] "/work/wt/coord/build-asan/tests/jobs/jobs-faults" "--cluster" "/work/wt/coord/build-asan/examples/cluster/sdlive-cluster" "--worker" "/work/wt/coord/build-asan/examples/worker/sdlive-worker" "--scenario" "failover" "--jobs" "1000" "--workers" "3")
set_tests_properties([=[jobs-failover]=] PROPERTIES  LABELS "jobs" RUN_SERIAL "TRUE" TIMEOUT "120" _BACKTRACE_TRIPLES "/work/wt/coord/tests/jobs/CMakeLists.txt;41;add_test;/work/wt/coord/tests/jobs/CMakeLists.txt;0;")
add_test([=[jobs-failover-stop]=] "/work/wt/coord/build-asan/tests/jobs/jobs-faults" "--cluster" "/work/wt/coord/build-asan/examples/cluster/sdlive-cluster" "--worker" "/work/wt/coord/build-asan/examples/worker/sdlive-worker" "--scenario" "failover-stop" "--jobs" "1000" "--workers" "3")
set_tests_properties([=[jobs-failover-stop]=] PROPERTIES  LABELS "jobs" RUN_SERIAL "TRUE" TIMEOUT "120" _BACKTRACE_TRIPLES "/work/wt/coord/tests/jobs/CMakeLists.txt;41;add_test;/work/wt/coord/tests/jobs/CMakeLists.txt;0;")
add_test([=[jobs-random]=] "/work/wt/coord/build-asan/tests/jobs/jobs-faults" "--cluster" "/work/wt/coord/build-asan/examples/cluster/sdlive-cluster" "--worker" "/work/wt/coord/build-asan/examples/worker/sdlive-worker" "--scenario" "random" "--runs" "20" "--jobs" "200" "--workers" "3" "--payload" "spin 5000" "--seed" "20261129")
set_tests_properties([=[jobs-random]=] PROPERTIES  LABELS "jobs" RUN_SERIAL "TRUE" TIMEOUT "600" _BACKTRACE_TRIPLES "/work/wt/coord/tests/jobs/CMakeLists.txt;45;add_test;/work/wt/coord/tests/jobs/CMakeLists.txt;0;")
add_test([=[e2e.jobs]=] "bash" "/work/wt/coord/tests/e2e/jobs.sh")
set_tests_properties([=[e2e.jobs]=] PROPERTIES  ENVIRONMENT "SDLIVE_BUILD_DIR=/work/wt/coord/build-asan;SDLIVE_E2E_LOG_DIR=/work/wt/coord/build-asan/tests/e2e/logs/jobs" LABELS "e2e;jobs" RUN_SERIAL "TRUE" SKIP_RETURN_CODE "77" TIMEOUT "300" _BACKTRACE_TRIPLES "/work/wt/coord/tests/jobs/CMakeLists.txt;61;add_test;/work/wt/coord/tests/jobs/CMakeLists.txt;0;")
add_test([=[jobs-postgresql]=] "bash" "/work/wt/coord/tests/jobs/jobs-postgresql.sh" "/work/wt/coord/build-asan/tests/jobs/pg-jobs" "/work/wt/coord/build-asan/tests/jobs/jobs-faults" "--cluster" "/work/wt/coord/build-asan/examples/cluster/sdlive-cluster" "--worker" "/work/wt/coord/build-asan/examples/worker/sdlive-worker" "--scenario" "random" "--runs" "5" "--jobs" "200" "--workers" "3" "--payload" "spin 5000" "--seed" "20261129")
set_tests_properties([=[jobs-postgresql]=] PROPERTIES  ENVIRONMENT "SDLIVE_PG_PORT=54331" LABELS "jobs;postgresql" RUN_SERIAL "TRUE" TIMEOUT "300" _BACKTRACE_TRIPLES "/work/wt/coord/tests/jobs/CMakeLists.txt;71;add_test;/work/wt/coord/tests/jobs/CMakeLists.txt;0;")
