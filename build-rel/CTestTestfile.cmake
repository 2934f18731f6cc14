# CMake generated Testfile for 
# Source directory: /work/wt/coord
# Build directory: /work/wt/coord/build-rel
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
subdirs("src")
subdirs("examples")
subdirs("units")
subdirs("man")
subdirs("tests")
