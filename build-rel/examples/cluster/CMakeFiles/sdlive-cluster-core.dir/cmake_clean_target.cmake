file(REMOVE_RECURSE
  "libsdlive-cluster-core.a"
)
