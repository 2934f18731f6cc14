file(REMOVE_RECURSE
  "libexample_frame.a"
)
