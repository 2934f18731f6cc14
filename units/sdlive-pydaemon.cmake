# The unit of the Python binding's example daemon (bindings/python/examples/
# sdlive-pydaemon), rendered from the shipped template by the shipped
# function (sdlive-units.cmake), so it carries the same hardening, Type=notify
# and WatchdogSec= as the reference daemons' units. Installed with the
# python3-sdlive package, not with the C daemons: it is not in
# SDLIVE_UNIT_DAEMONS. Included by bindings/python/ at configure and install
# time.
include(${CMAKE_CURRENT_LIST_DIR}/sdlive-units.cmake)

set(SDLIVE_UNIT_pydaemon_DESCRIPTION "Python daemon with an elected maintenance loop (example of the Python binding)")
# It pets (idle, per item of a pass): armed.
list(APPEND SDLIVE_PETTING_DAEMONS pydaemon)

# sdlive_render_pydaemon_unit(<output> <executable>): the rendered unit.
function(sdlive_render_pydaemon_unit output executable)
  sdlive_render_unit(pydaemon ${output} ${executable})
endfunction()
