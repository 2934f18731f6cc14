file(REMOVE_RECURSE
  "libexample_coordinator.a"
)
