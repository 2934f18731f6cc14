# The example daemon, sdlive-pydaemon, and its unit (units/sdlive-pydaemon.cmake).
include(${PROJECT_SOURCE_DIR}/units/sdlive-pydaemon.cmake)
include(${PROJECT_SOURCE_DIR}/cmake/SdliveUnitDir.cmake)

install(PROGRAMS ${CMAKE_CURRENT_SOURCE_DIR}/examples/sdlive-pydaemon
  DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT python)

# Its page, compressed for Debian as the other pages are.
configure_file(${CMAKE_CURRENT_SOURCE_DIR}/sdlive-pydaemon.8
  ${CMAKE_CURRENT_BINARY_DIR}/man8/sdlive-pydaemon.8 @ONLY)
set(page ${CMAKE_CURRENT_BINARY_DIR}/man8/sdlive-pydaemon.8)
if(SDLIVE_PACKAGE_DEB)
  execute_process(COMMAND gzip -9nf -k ${page} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "gzip of ${page} failed")
  endif()
  set(page ${page}.gz)
endif()
install(FILES ${page} DESTINATION ${CMAKE_INSTALL_MANDIR}/man8 COMPONENT python)

# Rendered for the configured prefix (what the units test checks) and, with
# ExecStart= naming the script in the source tree, for systemd-analyze verify.
set(SDLIVE_PYDAEMON_UNIT_DIR ${CMAKE_CURRENT_BINARY_DIR}/units)
sdlive_render_pydaemon_unit(${SDLIVE_PYDAEMON_UNIT_DIR}/sdlive-pydaemon.service
  ${CMAKE_INSTALL_FULL_BINDIR}/sdlive-pydaemon)
sdlive_render_pydaemon_unit(${CMAKE_CURRENT_BINARY_DIR}/units-verify/sdlive-pydaemon.service
  ${CMAKE_CURRENT_SOURCE_DIR}/examples/sdlive-pydaemon)

# Installed: rendered again by the install step for the prefix installed to.
configure_file(${CMAKE_CURRENT_SOURCE_DIR}/install-unit.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/install-unit.cmake @ONLY)
install(SCRIPT ${CMAKE_CURRENT_BINARY_DIR}/install-unit.cmake COMPONENT python)
