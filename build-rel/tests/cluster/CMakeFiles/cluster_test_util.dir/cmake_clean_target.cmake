file(REMOVE_RECURSE
  "libcluster_test_util.a"
)
