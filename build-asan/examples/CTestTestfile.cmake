# CMake generated Testfile for 
# Source directory: /work/wt/coord/examples
# Build directory: /work/wt/coord/build-asan/examples
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
subdirs("common")
subdirs("store")
subdirs("frame")
subdirs("coordinator")
subdirs("worker")
subdirs("cleaner")
subdirs("sentinel")
subdirs("acceptor")
subdirs("cluster")
