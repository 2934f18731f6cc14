# Debian's build flags as CMake arguments (sourced, not run): the flags the
# Debian packages are built with (dpkg-buildflags with every hardening
# feature: -O2, _FORTIFY_SOURCE, the stack protector, RELRO and BIND_NOW),
# and so what the default test stage and the demo build, so that what users
# run is what the suite tests. Needs dpkg-dev (scripts/deps.sh).
#
#   distro_cmake_flags NAME SOURCE_DIR   fills the array NAME with the -D
#                                        arguments for a build of SOURCE_DIR

# distro_flag VARIABLE SOURCE_DIR: one of dpkg-buildflags' variables
# (the file prefix map is made from the directory it runs in).
distro_flag() { (cd "$2" && DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get "$1"); }

distro_cmake_flags() {
  local -n flags_out=$1
  local cflags cppflags ldflags
  cflags=$(distro_flag CFLAGS "$2") && cppflags=$(distro_flag CPPFLAGS "$2") &&
    ldflags=$(distro_flag LDFLAGS "$2") || return 1
  flags_out=(
    -DCMAKE_BUILD_TYPE=None
    "-DCMAKE_C_FLAGS=$cflags $cppflags"
    "-DCMAKE_EXE_LINKER_FLAGS=$ldflags"
    "-DCMAKE_SHARED_LINKER_FLAGS=$ldflags"
  )
}
