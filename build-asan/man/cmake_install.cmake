# Install script for directory: /work/wt/review-lib/man

# Set the install prefix
if(NOT DEFINED CMAKE_INSTALL_PREFIX)
  set(CMAKE_INSTALL_PREFIX "/usr/local")
endif()
string(REGEX REPLACE "/$" "" CMAKE_INSTALL_PREFIX "${CMAKE_INSTALL_PREFIX}")

# Set the install configuration name.
if(NOT DEFINED CMAKE_INSTALL_CONFIG_NAME)
  if(BUILD_TYPE)
    string(REGEX REPLACE "^[^A-Za-z0-9_]+" ""
           CMAKE_INSTALL_CONFIG_NAME "${BUILD_TYPE}")
  else()
    set(CMAKE_INSTALL_CONFIG_NAME "")
  endif()
  message(STATUS "Install configuration: \"${CMAKE_INSTALL_CONFIG_NAME}\"")
endif()

# Set the component getting installed.
if(NOT CMAKE_INSTALL_COMPONENT)
  if(COMPONENT)
    message(STATUS "Install component: \"${COMPONENT}\"")
    set(CMAKE_INSTALL_COMPONENT "${COMPONENT}")
  else()
    set(CMAKE_INSTALL_COMPONENT)
  endif()
endif()

# Install shared libraries without execute permission?
if(NOT DEFINED CMAKE_INSTALL_SO_NO_EXE)
  set(CMAKE_INSTALL_SO_NO_EXE "1")
endif()

# Is this installation the result of a crosscompile?
if(NOT DEFINED CMAKE_CROSSCOMPILING)
  set(CMAKE_CROSSCOMPILING "FALSE")
endif()

# Set default install directory permissions.
if(NOT DEFINED CMAKE_OBJDUMP)
  set(CMAKE_OBJDUMP "/usr/bin/objdump")
endif()

if(CMAKE_INSTALL_COMPONENT STREQUAL "Unspecified" OR NOT CMAKE_INSTALL_COMPONENT)
  file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/share/man/man8" TYPE FILE FILES "/work/wt/review-lib/build-asan/man/man8/sdlive-acceptor.8")
endif()

if(CMAKE_INSTALL_COMPONENT STREQUAL "Unspecified" OR NOT CMAKE_INSTALL_COMPONENT)
  file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/share/man/man8" TYPE FILE FILES "/work/wt/review-lib/build-asan/man/man8/sdlive-cleaner.8")
endif()

if(CMAKE_INSTALL_COMPONENT STREQUAL "Unspecified" OR NOT CMAKE_INSTALL_COMPONENT)
  file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/share/man/man8" TYPE FILE FILES "/work/wt/review-lib/build-asan/man/man8/sdlive-cluster.8")
endif()

if(CMAKE_INSTALL_COMPONENT STREQUAL "Unspecified" OR NOT CMAKE_INSTALL_COMPONENT)
  file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/share/man/man8" TYPE FILE FILES "/work/wt/review-lib/build-asan/man/man8/sdlive-jobs.8")
endif()

if(CMAKE_INSTALL_COMPONENT STREQUAL "Unspecified" OR NOT CMAKE_INSTALL_COMPONENT)
  file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/share/man/man8" TYPE FILE FILES "/work/wt/review-lib/build-asan/man/man8/sdlive-sentinel.8")
endif()

if(CMAKE_INSTALL_COMPONENT STREQUAL "Unspecified" OR NOT CMAKE_INSTALL_COMPONENT)
  file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/share/man/man7" TYPE FILE FILES
    "/work/wt/review-lib/build-asan/man/man7/sdlive-units.7"
    "/work/wt/review-lib/build-asan/man/man7/sdlive-worker.service.7"
    "/work/wt/review-lib/build-asan/man/man7/sdlive-cleaner.service.7"
    "/work/wt/review-lib/build-asan/man/man7/sdlive-sentinel.service.7"
    "/work/wt/review-lib/build-asan/man/man7/sdlive-acceptor.service.7"
    "/work/wt/review-lib/build-asan/man/man7/sdlive-acceptor.socket.7"
    "/work/wt/review-lib/build-asan/man/man7/sdlive-cluster@.service.7"
    )
endif()

if(CMAKE_INSTALL_COMPONENT STREQUAL "Unspecified" OR NOT CMAKE_INSTALL_COMPONENT)
  file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/share/man/man8" TYPE FILE FILES "/work/wt/review-lib/build-asan/man/man8/sdlive-worker.8")
endif()

if(CMAKE_INSTALL_COMPONENT STREQUAL "dev" OR NOT CMAKE_INSTALL_COMPONENT)
  file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/share/man/man3" TYPE FILE FILES "/work/wt/review-lib/build-asan/man/man3/sdlive.3")
endif()

if(CMAKE_INSTALL_COMPONENT STREQUAL "dev" OR NOT CMAKE_INSTALL_COMPONENT)
  file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/share/man/man3" TYPE FILE FILES
    "/work/wt/review-lib/build-asan/man/man3/sdlive_idle.3"
    "/work/wt/review-lib/build-asan/man/man3/sdlive_wait_fd.3"
    "/work/wt/review-lib/build-asan/man/man3/sdlive_request_stop.3"
    "/work/wt/review-lib/build-asan/man/man3/sdlive_stopping.3"
    )
endif()

if(CMAKE_INSTALL_COMPONENT STREQUAL "dev" OR NOT CMAKE_INSTALL_COMPONENT)
  file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/share/man/man3" TYPE FILE FILES
    "/work/wt/review-lib/build-asan/man/man3/sdlive_new.3"
    "/work/wt/review-lib/build-asan/man/man3/sdlive_free.3"
    "/work/wt/review-lib/build-asan/man/man3/sdlive_supervised.3"
    "/work/wt/review-lib/build-asan/man/man3/sdlive_version.3"
    )
endif()

if(CMAKE_INSTALL_COMPONENT STREQUAL "dev" OR NOT CMAKE_INSTALL_COMPONENT)
  file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/share/man/man3" TYPE FILE FILES
    "/work/wt/review-lib/build-asan/man/man3/sdlive_notify_barrier.3"
    "/work/wt/review-lib/build-asan/man/man3/sdlive_notify_mainpid.3"
    "/work/wt/review-lib/build-asan/man/man3/sdlive_notify_exit_status.3"
    "/work/wt/review-lib/build-asan/man/man3/sdlive_notify_bus_error.3"
    "/work/wt/review-lib/build-asan/man/man3/sdlive_notify_access.3"
    "/work/wt/review-lib/build-asan/man/man3/sdlive_notify_raw.3"
    )
endif()

if(CMAKE_INSTALL_COMPONENT STREQUAL "dev" OR NOT CMAKE_INSTALL_COMPONENT)
  file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/share/man/man3" TYPE FILE FILES
    "/work/wt/review-lib/build-asan/man/man3/sdlive_notify_fdstore.3"
    "/work/wt/review-lib/build-asan/man/man3/sdlive_notify_fdstore_remove.3"
    )
endif()

if(CMAKE_INSTALL_COMPONENT STREQUAL "dev" OR NOT CMAKE_INSTALL_COMPONENT)
  file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/share/man/man3" TYPE FILE FILES
    "/work/wt/review-lib/build-asan/man/man3/sdlive_notify_ready.3"
    "/work/wt/review-lib/build-asan/man/man3/sdlive_notify_stopping.3"
    "/work/wt/review-lib/build-asan/man/man3/sdlive_notify_reloading.3"
    "/work/wt/review-lib/build-asan/man/man3/sdlive_notify_status.3"
    "/work/wt/review-lib/build-asan/man/man3/sdlive_notify_errno.3"
    "/work/wt/review-lib/build-asan/man/man3/sdlive_notify_extend_timeout.3"
    )
endif()

if(CMAKE_INSTALL_COMPONENT STREQUAL "dev" OR NOT CMAKE_INSTALL_COMPONENT)
  file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/share/man/man3" TYPE FILE FILES
    "/work/wt/review-lib/build-asan/man/man3/sdlive_peer_new.3"
    "/work/wt/review-lib/build-asan/man/man3/sdlive_peer_free.3"
    "/work/wt/review-lib/build-asan/man/man3/sdlive_peer_received.3"
    "/work/wt/review-lib/build-asan/man/man3/sdlive_peer_sent.3"
    "/work/wt/review-lib/build-asan/man/man3/sdlive_peer_expired.3"
    "/work/wt/review-lib/build-asan/man/man3/sdlive_peer_heartbeat_due.3"
    "/work/wt/review-lib/build-asan/man/man3/sdlive_peer_poll_timeout.3"
    )
endif()

if(CMAKE_INSTALL_COMPONENT STREQUAL "dev" OR NOT CMAKE_INSTALL_COMPONENT)
  file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/share/man/man3" TYPE FILE FILES
    "/work/wt/review-lib/build-asan/man/man3/sdlive_pet_watchdog.3"
    "/work/wt/review-lib/build-asan/man/man3/sdlive_watchdog_enabled.3"
    "/work/wt/review-lib/build-asan/man/man3/sdlive_watchdog_trigger.3"
    "/work/wt/review-lib/build-asan/man/man3/sdlive_watchdog_set_timeout.3"
    "/work/wt/review-lib/build-asan/man/man3/sdlive_pet_interval.3"
    "/work/wt/review-lib/build-asan/man/man3/sdlive_watchdog_next_due.3"
    "/work/wt/review-lib/build-asan/man/man3/sdlive_watchdog_fd.3"
    "/work/wt/review-lib/build-asan/man/man3/sdlive_last_pet_age.3"
    )
endif()

if(CMAKE_INSTALL_COMPONENT STREQUAL "dev" OR NOT CMAKE_INSTALL_COMPONENT)
  file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/share/man/man3" TYPE FILE FILES
    "/work/wt/review-lib/build-asan/man/man3/sdlive_progress_register.3"
    "/work/wt/review-lib/build-asan/man/man3/sdlive_progress_beat.3"
    "/work/wt/review-lib/build-asan/man/man3/sdlive_progress_park.3"
    "/work/wt/review-lib/build-asan/man/man3/sdlive_progress_unregister.3"
    "/work/wt/review-lib/build-asan/man/man3/sdlive_progress_age.3"
    "/work/wt/review-lib/build-asan/man/man3/sdlive_progress_stalled.3"
    )
endif()

