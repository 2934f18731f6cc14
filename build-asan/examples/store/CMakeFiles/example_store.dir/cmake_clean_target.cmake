file(REMOVE_RECURSE
  "libexample_store.a"
)
