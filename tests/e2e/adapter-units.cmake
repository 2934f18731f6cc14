# Units of the event-loop adapters (examples/adapters/) for adapter-loops.sh,
# rendered from the shipped template by the shipped function, so they carry
# the same hardening, Type=notify and WatchdogSec= as the reference daemons'
# units. Not installed: the adapters are examples, not shipped daemons (no
# package, no man page); ExecStart= names the binary in this build tree, and
# Documentation= only the units' page.
include(${PROJECT_SOURCE_DIR}/units/sdlive-units.cmake)

foreach(adapter libevent libuv glib sd-event)
  if(NOT TARGET sdlive-adapter-${adapter})
    continue()
  endif()
  set(daemon adapter-${adapter})
  set(SDLIVE_UNIT_${daemon}_DESCRIPTION "sdlive in a ${adapter} event loop (example)")
  list(APPEND SDLIVE_PETTING_DAEMONS ${daemon})
  set(rendered ${CMAKE_CURRENT_BINARY_DIR}/adapter-units/sdlive-${daemon}.service.in)
  sdlive_render_unit(${daemon} ${rendered} "$<TARGET_FILE:sdlive-adapter-${adapter}>")
  file(READ ${rendered} text)
  string(REPLACE "man:sdlive-${daemon}(8) " "" text "${text}")
  file(GENERATE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/adapter-units/sdlive-${daemon}.service
    CONTENT "${text}")
endforeach()
