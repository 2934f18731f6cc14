# The one place that says which daemons get a unit and which of them pet the
# systemd watchdog. Included by units/ (shipped units) and tests/units/.

# Every reference daemon that ships a unit.
set(SDLIVE_UNIT_DAEMONS worker cleaner sentinel acceptor cluster)

# Daemons whose main loop pets the watchdog: only these get WatchdogSec=.
set(SDLIVE_PETTING_DAEMONS worker cleaner cluster)

# Per-daemon settings. Unset means: plain unit sdlive-<name>.service, no
# network at all (PrivateNetwork=yes, AF_UNIX only), ProcSubset=pid, no
# extra lines.
set(SDLIVE_UNIT_worker_DESCRIPTION   "periodic worker that executes jobs for the coordinator")
set(SDLIVE_UNIT_cleaner_DESCRIPTION  "maintenance passes over a blob directory")
set(SDLIVE_UNIT_sentinel_DESCRIPTION "trivial ordering daemon")
set(SDLIVE_UNIT_acceptor_DESCRIPTION "event-driven unix-socket server")
set(SDLIVE_UNIT_cluster_DESCRIPTION  "elected leader with lease, fencing and job coordination (instance %i)")

# TCP is optional for these two (coordinator connections, a PostgreSQL
# store); the firewall admits loopback only: widen IPAddressAllow= in a
# drop-in for hosts that share a remote database.
set(SDLIVE_UNIT_worker_TCP  ON)
set(SDLIVE_UNIT_cluster_TCP ON)

# Cluster members run as instances, sdlive-cluster@<node>.service. Every
# instance shares the dynamic user (named after the unit prefix) and the
# state directory, where the embedded SQLite lease store lives.
set(SDLIVE_UNIT_cluster_FILE "sdlive-cluster@.service")
# The SQLite lease store stamps leases with the boot id, read from
# /proc/sys/kernel/random/boot_id: ProcSubset=pid would hide it.
set(SDLIVE_UNIT_cluster_PROC_SUBSET all)
set(SDLIVE_UNIT_cluster_ARGS "--node %i")
# User= names that shared dynamic user explicitly: both instances must be
# able to write the SQLite file.
set(SDLIVE_UNIT_cluster_EXTRA "User=sdlive-cluster")
# The cluster's failover follows its watchdog (a wedge is detected within
# WatchdogSec/2 by the health gate, a hung process killed after
# WatchdogSec): 10 s, argued in docs/cluster.md. Its main loop pets per
# item and no store call of it waits longer than 1 s.
set(SDLIVE_CLUSTER_WATCHDOG_SEC 10s CACHE STRING
  "WatchdogSec= of sdlive-cluster@.service (seconds or a systemd duration)")
set(SDLIVE_UNIT_cluster_WATCHDOG_SEC ${SDLIVE_CLUSTER_WATCHDOG_SEC})
# Once every process of a member is gone (crash, kill, watchdog), release
# the lease its leader recorded, fenced on holder, generation and this
# invocation, so a standby need not wait for it to expire. "-": a store it
# cannot reach leaves the lease to expire and does not fail the unit.
set(SDLIVE_UNIT_cluster_STOP_POST_ARGS "--release-after-death --node %i")

# Daemons that also ship a socket unit, sdlive-<d>.socket, rendered from
# units/sdlive-<d>.socket.in: the manager holds their listening socket.
set(SDLIVE_SOCKET_DAEMONS acceptor)
# The acceptor keeps each client connection in the FD store, so a restart
# does not drop it: room for all of them (CLIENTS_MAX in
# examples/acceptor/clients.h).
set(SDLIVE_UNIT_acceptor_EXTRA "FileDescriptorStoreMax=64")

# sdlive_render_unit(<daemon> <output file> <executable path>)
# Renders units/sdlive-daemon.service.in for one daemon. Hooks per daemon:
# SDLIVE_UNIT_<d>_ARGS (appended to ExecStart=), SDLIVE_UNIT_<d>_EXTRA (lines
# appended to [Service]), SDLIVE_UNIT_<d>_TCP, SDLIVE_UNIT_<d>_FILE,
# SDLIVE_UNIT_<d>_PROC_SUBSET, SDLIVE_UNIT_<d>_WATCHDOG_SEC (instead of
# SDLIVE_WATCHDOG_SEC), SDLIVE_UNIT_<d>_STOP_POST_ARGS (an
# ExecStopPost=-<executable> <args> line).
function(sdlive_render_unit daemon output executable)
  set(SDLIVE_UNIT_DAEMON ${daemon})
  set(SDLIVE_UNIT_DESCRIPTION "${SDLIVE_UNIT_${daemon}_DESCRIPTION}")
  sdlive_unit_file_name(${daemon} SDLIVE_UNIT_FILE)

  set(SDLIVE_UNIT_EXEC_START "${executable}")
  if(NOT "${SDLIVE_UNIT_${daemon}_ARGS}" STREQUAL "")
    string(APPEND SDLIVE_UNIT_EXEC_START " ${SDLIVE_UNIT_${daemon}_ARGS}")
  endif()

  if(daemon IN_LIST SDLIVE_PETTING_DAEMONS)
    set(watchdog ${SDLIVE_WATCHDOG_SEC})
    if(SDLIVE_UNIT_${daemon}_WATCHDOG_SEC)
      set(watchdog ${SDLIVE_UNIT_${daemon}_WATCHDOG_SEC})
    endif()
    if(watchdog MATCHES "^[0-9]+$")
      string(APPEND watchdog "s")
    endif()
    set(SDLIVE_UNIT_WATCHDOG
      "# The main loop pets the watchdog (WATCHDOG=1) while it makes progress.\nWatchdogSec=${watchdog}")
  else()
    set(SDLIVE_UNIT_WATCHDOG
      "# No WatchdogSec=: this daemon never sends WATCHDOG=1, so arming the\n# watchdog would kill it while it is perfectly healthy.")
  endif()

  if(SDLIVE_UNIT_${daemon}_TCP)
    set(SDLIVE_UNIT_NETWORK
      "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6\nIPAddressAllow=localhost")
  else()
    set(SDLIVE_UNIT_NETWORK
      "PrivateNetwork=yes\nRestrictAddressFamilies=AF_UNIX")
  endif()

  # Instances share their state directory (and so the SQLite store) but
  # each has a runtime directory of its own, sdlive-<d>/<instance>: the
  # manager removes a unit's runtime directory when it stops, and a shared
  # one, removed by the first instance to stop while the other sets up its
  # ExecStopPost=, fails that command with 226/NAMESPACE.
  set(SDLIVE_UNIT_RUNTIME_DIRECTORY sdlive-${daemon})
  if(SDLIVE_UNIT_FILE MATCHES "@\\.service$")
    string(APPEND SDLIVE_UNIT_RUNTIME_DIRECTORY "/%i")
  endif()

  set(SDLIVE_UNIT_PROC_SUBSET pid)
  if(SDLIVE_UNIT_${daemon}_PROC_SUBSET)
    set(SDLIVE_UNIT_PROC_SUBSET ${SDLIVE_UNIT_${daemon}_PROC_SUBSET})
  endif()

  set(SDLIVE_UNIT_EXTRA "")
  if(NOT "${SDLIVE_UNIT_${daemon}_EXTRA}" STREQUAL "")
    set(SDLIVE_UNIT_EXTRA "${SDLIVE_UNIT_${daemon}_EXTRA}\n")
  endif()
  if(NOT "${SDLIVE_UNIT_${daemon}_STOP_POST_ARGS}" STREQUAL "")
    string(APPEND SDLIVE_UNIT_EXTRA "ExecStopPost=-${executable} ${SDLIVE_UNIT_${daemon}_STOP_POST_ARGS}\n")
  endif()

  configure_file(${SDLIVE_UNITS_TEMPLATE} ${output} @ONLY)
endfunction()

# sdlive_unit_file_name(<daemon> <out var>): sdlive-<d>.service unless the
# daemon runs as instances (SDLIVE_UNIT_<d>_FILE).
function(sdlive_unit_file_name daemon out)
  if(SDLIVE_UNIT_${daemon}_FILE)
    set(${out} ${SDLIVE_UNIT_${daemon}_FILE} PARENT_SCOPE)
  else()
    set(${out} sdlive-${daemon}.service PARENT_SCOPE)
  endif()
endfunction()

# sdlive_unit_daemons_built(<out var>): the daemons of SDLIVE_UNIT_DAEMONS
# this build makes (a unit without its binary is useless). Call it after
# examples/ was added: it asks for the targets.
function(sdlive_unit_daemons_built out)
  set(built "")
  foreach(daemon IN LISTS SDLIVE_UNIT_DAEMONS)
    if(TARGET sdlive-${daemon})
      list(APPEND built ${daemon})
    endif()
  endforeach()
  set(${out} ${built} PARENT_SCOPE)
endfunction()

# sdlive_render_socket(<daemon> <output file>): renders the daemon's
# units/sdlive-<daemon>.socket.in (see SDLIVE_SOCKET_DAEMONS).
function(sdlive_render_socket daemon output)
  configure_file(${SDLIVE_UNITS_DIR}/sdlive-${daemon}.socket.in ${output} @ONLY)
endfunction()

set(SDLIVE_UNITS_DIR ${CMAKE_CURRENT_LIST_DIR})
set(SDLIVE_UNITS_TEMPLATE ${CMAKE_CURRENT_LIST_DIR}/sdlive-daemon.service.in)
