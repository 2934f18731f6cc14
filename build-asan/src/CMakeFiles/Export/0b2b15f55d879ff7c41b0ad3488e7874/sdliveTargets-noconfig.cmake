#----------------------------------------------------------------
# Generated CMake target import file.
#----------------------------------------------------------------

# Commands may need to know the format version.
set(CMAKE_IMPORT_FILE_VERSION 1)

# Import target "sdlive::sdlive" for configuration ""
set_property(TARGET sdlive::sdlive APPEND PROPERTY IMPORTED_CONFIGURATIONS NOCONFIG)
set_target_properties(sdlive::sdlive PROPERTIES
  IMPORTED_LOCATION_NOCONFIG "${_IMPORT_PREFIX}/lib/libsdlive.so.0.2.0"
  IMPORTED_SONAME_NOCONFIG "libsdlive.so.0"
  )

list(APPEND _cmake_import_check_targets sdlive::sdlive )
list(APPEND _cmake_import_check_files_for_sdlive::sdlive "${_IMPORT_PREFIX}/lib/libsdlive.so.0.2.0" )

# Commands beyond this point should not need to know the version.
set(CMAKE_IMPORT_FILE_VERSION)
