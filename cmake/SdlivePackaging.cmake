# Debian packages, built with CPack from a build configured for /usr:
#
#   libsdlive0       component "runtime": the shared library
#   libsdlive-dev    component "dev": header, .so link, pkg-config file,
#                    CMake package, section 3 pages
#   sdlive-daemons   component "daemons": reference daemons, units,
#                    sections 7 and 8 pages
#   python3-sdlive   component "python": the Python binding, its example
#                    daemon and unit (Architecture: all)
#
# Depends: of the packages holding binaries come from dpkg-shlibdeps; that
# of libsdlive-dev is its runtime at the same version. libsdlive0 ships a
# shlibs file, which dpkg-shlibdeps also reads for sdlive-daemons here.
# scripts/debs.sh configures, builds and packs; docs/packaging.md argues
# the choices and lists what lintian still reports.

if(NOT CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  message(FATAL_ERROR "SDLIVE_PACKAGE_DEB needs CMAKE_INSTALL_PREFIX=/usr (got ${CMAKE_INSTALL_PREFIX})")
endif()

set(SDLIVE_DEB_MAINTAINER "The sdlive developers <sdlive@example.org>" CACHE STRING
  "Maintainer: of the Debian packages")
set(SDLIVE_DEB_REVISION 1 CACHE STRING "Debian revision of the packages")
set(SDLIVE_DEB_VERSION ${PROJECT_VERSION}-${SDLIVE_DEB_REVISION})
# Honours SOURCE_DATE_EPOCH, for reproducible packages.
string(TIMESTAMP SDLIVE_DEB_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)

# /usr/share/doc/<package>/{copyright,changelog.Debian.gz} in every package.
file(READ ${PROJECT_SOURCE_DIR}/LICENSE SDLIVE_LICENSE_TEXT)
set(deb_dir ${PROJECT_BINARY_DIR}/deb)
configure_file(${CMAKE_CURRENT_LIST_DIR}/deb/copyright.in ${deb_dir}/copyright @ONLY)
configure_file(${CMAKE_CURRENT_LIST_DIR}/deb/changelog.in ${deb_dir}/changelog.Debian @ONLY)
execute_process(COMMAND gzip -9nf -k ${deb_dir}/changelog.Debian RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gzip of ${deb_dir}/changelog.Debian failed")
endif()

set(SDLIVE_DEB_PACKAGES runtime libsdlive0 dev libsdlive-dev)
if(SDLIVE_BUILD_EXAMPLES)
  list(APPEND SDLIVE_DEB_PACKAGES daemons sdlive-daemons)
endif()
list(APPEND SDLIVE_DEB_PACKAGES python python3-sdlive)
set(components "")
while(SDLIVE_DEB_PACKAGES)
  list(POP_FRONT SDLIVE_DEB_PACKAGES component package)
  list(APPEND components ${component})
  string(TOUPPER ${component} COMP)
  set(CPACK_DEBIAN_${COMP}_PACKAGE_NAME ${package})
  install(FILES ${deb_dir}/copyright ${deb_dir}/changelog.Debian.gz
    DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${package} COMPONENT ${component})
endwhile()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME sdlive)
set(CPACK_PACKAGE_VENDOR "The sdlive developers")
set(CPACK_PACKAGE_CONTACT "${SDLIVE_DEB_MAINTAINER}")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# Units install to /lib/systemd/system, outside the prefix: stage with
# DESTDIR, so that every path lands inside the package.
set(CPACK_SET_DESTDIR ON)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL ${components})
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE ${SDLIVE_DEB_REVISION})
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)

# libsdlive0: a shlibs file (a package built from this tree asks for at
# least its upstream version: always right, if stricter than a per-symbol
# symbols file would be) and the ldconfig trigger.
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
set(SDLIVE_DEB_SHLIBS "libsdlive ${SDLIVE_SOVERSION} libsdlive0 (>= ${PROJECT_VERSION})\n")
file(WRITE ${deb_dir}/control/shlibs "${SDLIVE_DEB_SHLIBS}")
file(WRITE ${deb_dir}/control/triggers "activate-noawait ldconfig\n")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA
  ${deb_dir}/control/shlibs ${deb_dir}/control/triggers)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_STRICT_PERMISSION ON)

set(CPACK_COMPONENT_RUNTIME_DESCRIPTION
"systemd-native liveness library for C daemons
libsdlive tells the service manager what a daemon is doing (READY=1,
STATUS=, STOPPING=1) and pets the systemd watchdog only from code paths
that prove progress: rate-limited keepalives on CLOCK_MONOTONIC, idle
waits that pet when due, and progress loops that withhold keepalives
while a thread is stuck.

This package holds the shared library.")

set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_COMPONENT_DEV_DEPENDS runtime)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
set(CPACK_COMPONENT_DEV_DESCRIPTION
"systemd-native liveness library for C daemons (development files)
libsdlive tells the service manager what a daemon is doing and pets the
systemd watchdog only from code paths that prove progress.

This package holds the header, the pkg-config file, the CMake package
(find_package(sdlive)) and the section 3 manual pages.")

set(CPACK_DEBIAN_DAEMONS_PACKAGE_SECTION admin)
set(CPACK_COMPONENT_DAEMONS_DESCRIPTION
"reference daemons and systemd units for libsdlive
Five small daemons that show how libsdlive is meant to be used: a worker
that executes jobs, a cleaner that makes long passes over a blob
directory, an elected cluster leader with a fenced lease, and two daemons
that never pet the watchdog. Their units arm WatchdogSec= only for the
daemons that pet. Installing the package enables nothing.")

# python3-sdlive holds no binary: it loads libsdlive.so.0 with cffi at run
# time, so its Depends: are typed (the library at least this version, cffi,
# the interpreter).
set(CPACK_DEBIAN_PYTHON_PACKAGE_SECTION python)
set(CPACK_DEBIAN_PYTHON_PACKAGE_ARCHITECTURE all)
set(CPACK_DEBIAN_PYTHON_PACKAGE_DEPENDS
  "python3:any (>= 3.8), python3-cffi, libsdlive0 (>= ${PROJECT_VERSION})")
set(CPACK_COMPONENT_PYTHON_DESCRIPTION
"Python binding of libsdlive: progress-gated systemd watchdog keepalives
The sdlive module gives Python daemons libsdlive's semantics through its
stable ABI (loaded with cffi, nothing compiled): rate-limited keepalives
on CLOCK_MONOTONIC, an idle() that sleeps without a tick, progress loops
that withhold keepalives while a loop is stuck, asyncio support, the FD
store and the barrier.

This package also holds sdlive-pydaemon, an example daemon, and its unit.")

# dpkg-shlibdeps resolves libsdlive.so.0 for the daemons through a staging
# root that holds the library and libsdlive0's shlibs file.
set(shlibs_root ${deb_dir}/shlibs-root)
file(WRITE ${shlibs_root}/DEBIAN/shlibs "${SDLIVE_DEB_SHLIBS}")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${shlibs_root}/lib)
set(CPACK_PROJECT_CONFIG_FILE ${deb_dir}/cpack-project.cmake)
file(GENERATE OUTPUT ${CPACK_PROJECT_CONFIG_FILE} CONTENT
"# Generated by cmake/SdlivePackaging.cmake; run by cpack.
file(COPY \"$<TARGET_FILE:sdlive>\" DESTINATION \"${shlibs_root}/lib\")
file(CREATE_LINK \"$<TARGET_FILE_NAME:sdlive>\"
  \"${shlibs_root}/lib/$<TARGET_SONAME_FILE_NAME:sdlive>\" SYMBOLIC)
")

include(CPack)
