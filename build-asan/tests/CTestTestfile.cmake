# CMake generated Testfile for 
# Source directory: /work/wt/review-lib/tests
# Build directory: /work/wt/review-lib/build-asan/tests
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
subdirs("unit")
subdirs("install")
subdirs("packaging")
subdirs("bench")
subdirs("suite")
subdirs("docs")
