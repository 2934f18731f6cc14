file(REMOVE_RECURSE
  "libsdlive_internal.a"
)
