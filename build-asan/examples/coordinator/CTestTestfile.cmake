# CMake generated Testfile for 
# Source directory: /work/wt/coord/examples/coordinator
# Build directory: /work/wt/coord/build-asan/examples/coordinator
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
