# CMake generated Testfile for 
# Source directory: /work/wt/coord/tests/units
# Build directory: /work/wt/coord/build-rel/tests/units
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
add_test([=[units]=] "bash" "/work/wt/coord/tests/units/check_units.sh" "/work/wt/coord/build-rel/units" "/work/wt/coord/build-rel/tests/units/verify" "worker,cleaner,sentinel,acceptor,cluster" "worker,cleaner,cluster" "2.5")
set_tests_properties([=[units]=] PROPERTIES  LABELS "units" TIMEOUT "60" _BACKTRACE_TRIPLES "/work/wt/coord/tests/units/CMakeLists.txt;21;add_test;/work/wt/coord/tests/units/CMakeLists.txt;0;")
