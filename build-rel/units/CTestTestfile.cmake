# CMake generated Testfile for 
# Source directory: /work/wt/coord/units
# Build directory: /work/wt/coord/build-rel/units
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
