# CMake generated Testfile for 
# Source directory: /work/wt/coord/tests/cluster
# Build directory: /work/wt/coord/build-rel/tests/cluster
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
add_test([=[cluster-unit-health-gate]=] "/work/wt/coord/build-rel/tests/cluster/test-cluster-health-gate")
set_tests_properties([=[cluster-unit-health-gate]=] PROPERTIES  LABELS "unit" TIMEOUT "60" _BACKTRACE_TRIPLES "/work/wt/coord/tests/cluster/CMakeLists.txt;14;add_test;/work/wt/coord/tests/cluster/CMakeLists.txt;20;cluster_unit_test;/work/wt/coord/tests/cluster/CMakeLists.txt;0;")
add_test([=[cluster-unit-lease]=] "/work/wt/coord/build-rel/tests/cluster/test-cluster-lease")
set_tests_properties([=[cluster-unit-lease]=] PROPERTIES  LABELS "unit;thread" TIMEOUT "60" _BACKTRACE_TRIPLES "/work/wt/coord/tests/cluster/CMakeLists.txt;14;add_test;/work/wt/coord/tests/cluster/CMakeLists.txt;21;cluster_unit_test;/work/wt/coord/tests/cluster/CMakeLists.txt;0;")
add_test([=[cluster-unit-maintenance]=] "/work/wt/coord/build-rel/tests/cluster/test-cluster-maintenance")
set_tests_properties([=[cluster-unit-maintenance]=] PROPERTIES  LABELS "unit" TIMEOUT "60" _BACKTRACE_TRIPLES "/work/wt/coord/tests/cluster/CMakeLists.txt;14;add_test;/work/wt/coord/tests/cluster/CMakeLists.txt;22;cluster_unit_test;/work/wt/coord/tests/cluster/CMakeLists.txt;0;")
add_test([=[cluster-unit-election]=] "/work/wt/coord/build-rel/tests/cluster/test-cluster-election")
set_tests_properties([=[cluster-unit-election]=] PROPERTIES  LABELS "unit;thread" TIMEOUT "60" _BACKTRACE_TRIPLES "/work/wt/coord/tests/cluster/CMakeLists.txt;14;add_test;/work/wt/coord/tests/cluster/CMakeLists.txt;23;cluster_unit_test;/work/wt/coord/tests/cluster/CMakeLists.txt;0;")
add_test([=[cluster-pair-sqlite]=] "bash" "/work/wt/coord/tests/cluster/cluster-pair.sh" "sqlite" "/work/wt/coord/build-rel/examples/cluster/sdlive-cluster")
set_tests_properties([=[cluster-pair-sqlite]=] PROPERTIES  LABELS "cluster" TIMEOUT "120" _BACKTRACE_TRIPLES "/work/wt/coord/tests/cluster/CMakeLists.txt;26;add_test;/work/wt/coord/tests/cluster/CMakeLists.txt;0;")
add_test([=[cluster-pair-postgresql]=] "bash" "/work/wt/coord/tests/cluster/cluster-pair.sh" "postgresql" "/work/wt/coord/build-rel/examples/cluster/sdlive-cluster" "/work/wt/coord/tests/store/pg-server.sh")
set_tests_properties([=[cluster-pair-postgresql]=] PROPERTIES  ENVIRONMENT "SDLIVE_PG_PORT=54330" LABELS "cluster" TIMEOUT "180" _BACKTRACE_TRIPLES "/work/wt/coord/tests/cluster/CMakeLists.txt;31;add_test;/work/wt/coord/tests/cluster/CMakeLists.txt;0;")
