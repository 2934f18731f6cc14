file(REMOVE_RECURSE
  "libsdlive_test_harness.a"
)
