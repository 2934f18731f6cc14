# CMake generated Testfile for 
# Source directory: /work/wt/coord/tests
# Build directory: /work/wt/coord/build-rel/tests
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
subdirs("unit")
subdirs("install")
subdirs("packaging")
subdirs("bench")
subdirs("suite")
subdirs("store")
subdirs("frame")
subdirs("cluster")
subdirs("jobs")
subdirs("units")
subdirs("e2e")
subdirs("fuzz")
subdirs("adversarial")
