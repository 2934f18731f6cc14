file(REMOVE_RECURSE
  "libsdlive-examples-common.a"
)
