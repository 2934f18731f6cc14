# CMake generated Testfile for 
# Source directory: /work/wt/coord/tests/unit
# Build directory: /work/wt/coord/build-rel/tests/unit
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
add_test([=[unit-lifecycle]=] "/work/wt/coord/build-rel/tests/unit/test-lifecycle")
set_tests_properties([=[unit-lifecycle]=] PROPERTIES  LABELS "unit" TIMEOUT "60" _BACKTRACE_TRIPLES "/work/wt/coord/tests/unit/CMakeLists.txt;22;add_test;/work/wt/coord/tests/unit/CMakeLists.txt;30;sdlive_unit_test;/work/wt/coord/tests/unit/CMakeLists.txt;0;")
add_test([=[unit-notify]=] "/work/wt/coord/build-rel/tests/unit/test-notify")
set_tests_properties([=[unit-notify]=] PROPERTIES  LABELS "unit" TIMEOUT "60" _BACKTRACE_TRIPLES "/work/wt/coord/tests/unit/CMakeLists.txt;22;add_test;/work/wt/coord/tests/unit/CMakeLists.txt;31;sdlive_unit_test;/work/wt/coord/tests/unit/CMakeLists.txt;0;")
add_test([=[unit-fdstore]=] "/work/wt/coord/build-rel/tests/unit/test-fdstore")
set_tests_properties([=[unit-fdstore]=] PROPERTIES  LABELS "unit" TIMEOUT "60" _BACKTRACE_TRIPLES "/work/wt/coord/tests/unit/CMakeLists.txt;22;add_test;/work/wt/coord/tests/unit/CMakeLists.txt;32;sdlive_unit_test;/work/wt/coord/tests/unit/CMakeLists.txt;0;")
add_test([=[unit-watchdog]=] "/work/wt/coord/build-rel/tests/unit/test-watchdog")
set_tests_properties([=[unit-watchdog]=] PROPERTIES  LABELS "unit" TIMEOUT "60" _BACKTRACE_TRIPLES "/work/wt/coord/tests/unit/CMakeLists.txt;22;add_test;/work/wt/coord/tests/unit/CMakeLists.txt;33;sdlive_unit_test;/work/wt/coord/tests/unit/CMakeLists.txt;0;")
add_test([=[unit-watchdog-threads]=] "/work/wt/coord/build-rel/tests/unit/test-watchdog" "thread")
set_tests_properties([=[unit-watchdog-threads]=] PROPERTIES  LABELS "unit;thread" TIMEOUT "120" _BACKTRACE_TRIPLES "/work/wt/coord/tests/unit/CMakeLists.txt;25;add_test;/work/wt/coord/tests/unit/CMakeLists.txt;33;sdlive_unit_test;/work/wt/coord/tests/unit/CMakeLists.txt;0;")
add_test([=[unit-idle]=] "/work/wt/coord/build-rel/tests/unit/test-idle")
set_tests_properties([=[unit-idle]=] PROPERTIES  LABELS "unit" TIMEOUT "60" _BACKTRACE_TRIPLES "/work/wt/coord/tests/unit/CMakeLists.txt;22;add_test;/work/wt/coord/tests/unit/CMakeLists.txt;34;sdlive_unit_test;/work/wt/coord/tests/unit/CMakeLists.txt;0;")
add_test([=[unit-idle-threads]=] "/work/wt/coord/build-rel/tests/unit/test-idle" "thread")
set_tests_properties([=[unit-idle-threads]=] PROPERTIES  LABELS "unit;thread" TIMEOUT "120" _BACKTRACE_TRIPLES "/work/wt/coord/tests/unit/CMakeLists.txt;25;add_test;/work/wt/coord/tests/unit/CMakeLists.txt;34;sdlive_unit_test;/work/wt/coord/tests/unit/CMakeLists.txt;0;")
add_test([=[unit-progress]=] "/work/wt/coord/build-rel/tests/unit/test-progress")
set_tests_properties([=[unit-progress]=] PROPERTIES  LABELS "unit" TIMEOUT "60" _BACKTRACE_TRIPLES "/work/wt/coord/tests/unit/CMakeLists.txt;22;add_test;/work/wt/coord/tests/unit/CMakeLists.txt;35;sdlive_unit_test;/work/wt/coord/tests/unit/CMakeLists.txt;0;")
add_test([=[unit-progress-threads]=] "/work/wt/coord/build-rel/tests/unit/test-progress" "thread")
set_tests_properties([=[unit-progress-threads]=] PROPERTIES  LABELS "unit;thread" TIMEOUT "120" _BACKTRACE_TRIPLES "/work/wt/coord/tests/unit/CMakeLists.txt;25;add_test;/work/wt/coord/tests/unit/CMakeLists.txt;35;sdlive_unit_test;/work/wt/coord/tests/unit/CMakeLists.txt;0;")
add_test([=[unit-peer]=] "/work/wt/coord/build-rel/tests/unit/test-peer")
set_tests_properties([=[unit-peer]=] PROPERTIES  LABELS "unit" TIMEOUT "60" _BACKTRACE_TRIPLES "/work/wt/coord/tests/unit/CMakeLists.txt;22;add_test;/work/wt/coord/tests/unit/CMakeLists.txt;36;sdlive_unit_test;/work/wt/coord/tests/unit/CMakeLists.txt;0;")
