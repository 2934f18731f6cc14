# The cluster daemon's end-to-end scenarios (cluster-failover.sh), once per
# store. Included from tests/e2e/CMakeLists.txt.
set(cluster_e2e_stores sqlite)
if(SDLIVE_STORE_HAVE_POSTGRES)
  list(APPEND cluster_e2e_stores postgresql)
endif()

foreach(backend IN LISTS cluster_e2e_stores)
  sdlive_e2e_test(e2e.cluster-failover-${backend} "e2e;cluster" 180 cluster-failover-${backend}
    ${CMAKE_CURRENT_LIST_DIR}/cluster-failover.sh ${backend})
endforeach()

# One leader's maintenance pass over a large inventory (2 x WatchdogSec or more) at
# WatchdogSec=1s: pets per item, never killed.
sdlive_e2e_test(e2e.cluster-large-pass "e2e;cluster" 300 cluster-large-pass
  ${CMAKE_CURRENT_LIST_DIR}/cluster-large-pass.sh)

# Failover at the shipped defaults (no scaling: ~1 min per store), in its
# own label: ctest -L e2e-defaults. Note that -L e2e matches it too.
foreach(backend IN LISTS cluster_e2e_stores)
  sdlive_e2e_test(e2e-defaults.cluster-${backend} "e2e-defaults;cluster" 300 cluster-defaults-${backend}
    ${CMAKE_CURRENT_LIST_DIR}/cluster-defaults.sh ${backend})
endforeach()

# Randomized failures of the leader against three members, scaled times
# (about a minute each): label e2e-random, run by the e2e-defaults stage.
foreach(backend IN LISTS cluster_e2e_stores)
  sdlive_e2e_test(e2e.cluster-random-${backend} "e2e-random;cluster" 240 cluster-random-${backend}
    ${CMAKE_CURRENT_LIST_DIR}/cluster-random.sh ${backend})
endforeach()

# The lease in etcd (a three-member cluster on loopback, ports 23880-23885),
# the work in SQLite fenced by token: the failover table at the shipped
# defaults plus etcd's own faults (about 4 min): ctest -L e2e-etcd.
if(TARGET sdlive-example-etcd)
  sdlive_e2e_test(e2e-etcd.cluster-defaults "e2e-etcd;cluster" 600 cluster-defaults-etcd
    ${CMAKE_CURRENT_LIST_DIR}/cluster-defaults.sh etcd)
endif()

# The same, times scaled (WatchdogSec=1s, lease 3s), in a network namespace
# of its own so that one etcd member can be partitioned; the deposed
# leader's write rejected by the token, every term's claim, a run of jobs
# (about 2.5 min).
if(TARGET sdlive-example-etcd)
  add_test(NAME e2e-etcd.cluster-failover
    COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/cluster-failover-etcd.sh)
  set_tests_properties(e2e-etcd.cluster-failover PROPERTIES
    LABELS "e2e-etcd;cluster"
    RUN_SERIAL TRUE
    TIMEOUT 300
    SKIP_RETURN_CODE 77
    ENVIRONMENT "SDLIVE_BUILD_DIR=${CMAKE_BINARY_DIR};SDLIVE_E2E_LOG_DIR=${CMAKE_CURRENT_BINARY_DIR}/logs/cluster-failover-etcd")
endif()
