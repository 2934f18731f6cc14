# CMake generated Testfile for 
# Source directory: /work/wt/review-lib/src
# Build directory: /work/wt/review-lib/build-asan/src
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
