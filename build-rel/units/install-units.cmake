# Generated from cmake/SdliveInstallUnits.cmake.in; run by `cmake --install`.
# Renders the units again for the prefix being installed to, which
# `cmake --install --prefix` may change after configuring, so that both the
# unit directory and ExecStart= follow it; then installs them (DESTDIR and
# the install manifest apply as for any installed file).
cmake_policy(VERSION 3.25)

set(configured_prefix "/usr/local")
set(unit_dir "/usr/local/lib/systemd/system")
set(unit_dir_overridden OFF)
set(unit_dir_prefix_relative "lib/systemd/system")
set(bindir "bin")
set(daemons "worker;cleaner;sentinel;acceptor;cluster")
set(units_as_is "")
set(SDLIVE_WATCHDOG_SEC "60")
include("/work/wt/coord/units/sdlive-units.cmake")

if(NOT IS_ABSOLUTE "${unit_dir}")
  set(unit_dir "${CMAKE_INSTALL_PREFIX}/${unit_dir}")
elseif(NOT unit_dir_overridden)
  cmake_path(COMPARE "${CMAKE_INSTALL_PREFIX}/" EQUAL "${configured_prefix}/" same_prefix)
  if(NOT same_prefix)
    set(unit_dir "${CMAKE_INSTALL_PREFIX}/${unit_dir_prefix_relative}")
  endif()
endif()
if(NOT IS_ABSOLUTE "${bindir}")
  set(bindir "${CMAKE_INSTALL_PREFIX}/${bindir}")
endif()

# One render directory per destination: installs to different prefixes
# from one build tree do not share files.
string(MD5 key "$ENV{DESTDIR}|${CMAKE_INSTALL_PREFIX}|${unit_dir}")
set(render_dir "/work/wt/coord/build-rel/units/install-render/${key}")
file(REMOVE_RECURSE "${render_dir}")
set(files "")
foreach(daemon IN LISTS daemons)
  sdlive_unit_file_name(${daemon} unit_file)
  sdlive_render_unit(${daemon} "${render_dir}/${unit_file}" "${bindir}/sdlive-${daemon}")
  list(APPEND files "${render_dir}/${unit_file}")
endforeach()
list(APPEND files ${units_as_is})

file(INSTALL DESTINATION "${unit_dir}" TYPE FILE FILES ${files})
