# RUNPATH of the installed executables: they find the installed
# libsdlive.so.0 from any prefix without LD_LIBRARY_PATH or ldconfig.
#
# A library directory the linker searches by default (/usr/lib/<multiarch>
# for a /usr install) needs no RUNPATH, and Debian forbids one there. Any
# other gets $ORIGIN/<bindir to libdir>, e.g. $ORIGIN/../lib: relative to
# the executable, so the tree still works when installed with DESTDIR,
# moved, or installed with `cmake --install --prefix`.
#
# Sets CMAKE_INSTALL_RPATH for the targets defined after the include (the
# daemons); the library itself gets none.
set(SDLIVE_INSTALL_RPATH "")
list(FIND CMAKE_C_IMPLICIT_LINK_DIRECTORIES "${CMAKE_INSTALL_FULL_LIBDIR}" system_libdir)
if(system_libdir EQUAL -1)
  file(RELATIVE_PATH bin_to_lib "${CMAKE_INSTALL_FULL_BINDIR}" "${CMAKE_INSTALL_FULL_LIBDIR}")
  set(SDLIVE_INSTALL_RPATH "$ORIGIN/${bin_to_lib}")
  unset(bin_to_lib)
endif()
unset(system_libdir)
set(CMAKE_INSTALL_RPATH "${SDLIVE_INSTALL_RPATH}")
