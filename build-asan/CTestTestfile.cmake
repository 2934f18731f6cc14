# CMake generated Testfile for 
# Source directory: /work/wt/review-lib
# Build directory: /work/wt/review-lib/build-asan
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
subdirs("src")
subdirs("man")
subdirs("tests")
