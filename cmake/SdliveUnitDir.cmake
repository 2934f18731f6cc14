# The systemd unit directory, relative to the install prefix.
#
# pkg-config's `systemd` module names the directory its own systemd reads
# (systemd_system_unit_dir), built from its variables prefix and root_prefix
# (rootprefix on older systemd). Installing to that same prefix (a /usr
# package) keeps the distribution's directory, /lib/systemd/system or
# /usr/lib/systemd/system. Any other prefix redefines those variables to
# itself, as other projects do: /usr/local gives /usr/local/lib/systemd/system
# (which systemd also reads), /opt/x gives /opt/x/lib/systemd/system. Without
# pkg-config's systemd, <prefix>/lib/systemd/system.
#
# Sets:
#   SDLIVE_SYSTEMD_UNIT_DIR (cache) the directory for the configured prefix;
#     set it to override (absolute, or relative to the install prefix)
#   SDLIVE_UNIT_DIR_PREFIX_RELATIVE  the directory under any other prefix,
#     relative to it (the install step uses it when `cmake --install --prefix`
#     differs from the configured prefix)
#   SDLIVE_UNIT_DIR_OVERRIDDEN       ON when the cache value is the user's

# sdlive_pkg_systemd_unit_dir(<out var> [<prefix>]): systemd_system_unit_dir,
# with the prefix variables redefined to <prefix> when given; empty when
# pkg-config has no systemd module.
function(sdlive_pkg_systemd_unit_dir out)
  set(defines "")
  if(ARGC GREATER 1)
    foreach(var prefix root_prefix rootprefix)
      list(APPEND defines --define-variable=${var}=${ARGV1})
    endforeach()
  endif()
  set(dir "")
  if(PKG_CONFIG_EXECUTABLE)
    execute_process(
      COMMAND ${PKG_CONFIG_EXECUTABLE} ${defines} --variable=systemd_system_unit_dir systemd
      OUTPUT_VARIABLE dir OUTPUT_STRIP_TRAILING_WHITESPACE
      ERROR_QUIET RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      set(dir "")
    endif()
  endif()
  set(${out} "${dir}" PARENT_SCOPE)
endfunction()

# sdlive_path_under(<path> <dir> <out var>): <path> relative to <dir>, or
# empty when it is not inside <dir>.
function(sdlive_path_under path dir out)
  set(rel "")
  cmake_path(IS_PREFIX dir "${path}" NORMALIZE inside)
  if(inside)
    cmake_path(RELATIVE_PATH path BASE_DIRECTORY "${dir}" OUTPUT_VARIABLE rel)
  endif()
  set(${out} "${rel}" PARENT_SCOPE)
endfunction()

# Under any prefix: redefine the prefix to a marker and keep what follows it.
set(marker /sdlive-prefix-marker)
sdlive_pkg_systemd_unit_dir(pkg_marker_dir ${marker})
sdlive_path_under("${pkg_marker_dir}" ${marker} SDLIVE_UNIT_DIR_PREFIX_RELATIVE)
if(SDLIVE_UNIT_DIR_PREFIX_RELATIVE STREQUAL "")
  set(SDLIVE_UNIT_DIR_PREFIX_RELATIVE lib/systemd/system)
endif()

# The configured prefix: the distribution's own directory if it is
# pkg-config's prefix, else the prefix-relative one.
execute_process(COMMAND ${PKG_CONFIG_EXECUTABLE} --variable=prefix systemd
  OUTPUT_VARIABLE pkg_prefix OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
sdlive_pkg_systemd_unit_dir(pkg_own_dir)
cmake_path(COMPARE "${pkg_prefix}/" EQUAL "${CMAKE_INSTALL_PREFIX}/" distro_prefix)
if(distro_prefix AND NOT pkg_own_dir STREQUAL "")
  set(derived ${pkg_own_dir})
else()
  set(derived ${CMAKE_INSTALL_PREFIX}/${SDLIVE_UNIT_DIR_PREFIX_RELATIVE})
endif()

# A cache value that is the last derived one (or, in a build tree configured
# before the directory followed the prefix, pkg-config's unredefined one)
# follows the prefix; anything else is the user's.
set(previous "${SDLIVE_SYSTEMD_UNIT_DIR_DERIVED}")
if(NOT DEFINED SDLIVE_SYSTEMD_UNIT_DIR_DERIVED)
  set(previous "${pkg_own_dir}")
endif()
if(NOT DEFINED SDLIVE_SYSTEMD_UNIT_DIR OR SDLIVE_SYSTEMD_UNIT_DIR STREQUAL ""
   OR SDLIVE_SYSTEMD_UNIT_DIR STREQUAL previous)
  set(SDLIVE_SYSTEMD_UNIT_DIR ${derived} CACHE PATH
    "Where the systemd units are installed (default: pkg-config systemd's systemd_system_unit_dir under the install prefix)"
    FORCE)
  set(SDLIVE_UNIT_DIR_OVERRIDDEN OFF)
else()
  set_property(CACHE SDLIVE_SYSTEMD_UNIT_DIR PROPERTY TYPE PATH)
  set(SDLIVE_UNIT_DIR_OVERRIDDEN ON)
endif()
set(SDLIVE_SYSTEMD_UNIT_DIR_DERIVED ${derived} CACHE INTERNAL
  "SDLIVE_SYSTEMD_UNIT_DIR as derived from the prefix at the last configure")
unset(marker)
unset(previous)
unset(derived)
