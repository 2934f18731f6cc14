# shellcheck shell=bash
# harness.sh: a private systemd user manager for end-to-end tests, following
# DESIGN.md "Testing under a real systemd manager". Sourced by the scenario
# scripts and by scripts/demo.sh; needs bash and root.
#
#   source tests/e2e/harness.sh
#   harness_start "$@"          # first: re-executes the script in a private
#                               # mount namespace, then starts the manager
#   harness_units_install       # the shipped units + scaling drop-ins
#   systemctl --user start sdlive-worker.service ...
#
# The units under test are the ones `cmake --install` ships, byte for byte:
# the build is installed with DESTDIR into a tmpfs and overlaid on the
# configured prefix inside the namespace (with a private ld.so.cache), so
# ExecStart= and the whole sandbox are exactly what an operator gets. Only
# drop-ins differ: scaled times, output to files, a death record, the
# fault-injection environment.
#
# Environment:
#   SDLIVE_BUILD_DIR      build tree to install from (required)
#   SDLIVE_E2E_PACKAGE_ROOT  a root the build's Debian packages were unpacked
#                         into (dpkg --root): the units and programs under
#                         test are the packaged ones instead of the
#                         build's install (tests/packaging/deb.sh)
#   SDLIVE_E2E_LOG_DIR    unit output, death records, manager log
#                         (default: a new directory under /tmp)
#   SDLIVE_E2E_WATCHDOG   scaled WatchdogSec= for armed units (default 1s)
#   CI=true               a harness that cannot start fails instead of skipping
#
# Teardown (manager exit, kill, unmount) always runs, from an EXIT trap. A
# scenario that sets its own EXIT trap must call harness_teardown from it,
# with nothing before it that can fail. Should the script die without its
# trap, the manager still gets SIGTERM (parent-death signal) and stops its
# units.

set -euo pipefail

HARNESS_SKIP=77
HARNESS_MANAGER=/lib/systemd/systemd
: "${SDLIVE_E2E_WATCHDOG:=1s}"

harness_log() { printf 'e2e: %s\n' "$*" >&2; }

harness_fail() {
  printf '\ne2e: FAIL: %s\n' "$*" >&2
  harness_dump_logs
  exit 1
}

# The manager could not be started here: loud SKIP, or FAIL under CI=true.
harness_unavailable() {
  if [[ ${CI:-} == true ]]; then
    printf '\n**** e2e: FAIL: cannot start a private systemd manager: %s\n' "$*" >&2
    printf '**** (CI=true: an e2e suite that cannot run is a failure)\n\n' >&2
    exit 1
  fi
  printf '\n**** e2e: SKIP: cannot start a private systemd manager: %s\n' "$*" >&2
  printf '**** Run as root on Linux with systemd installed; see docs/operator.md.\n\n' >&2
  exit "$HARNESS_SKIP"
}

# harness_own_netns SCRIPT ARGS...: runs the calling script again in a
# network namespace of its own (unshare --net, loopback up), once, before
# anything else, and records the namespace it started in as
# SDLIVE_E2E_OUTER_NETNS: packet filters (a partition) are set up only in
# the test's own namespace, never in the machine's. Returns in the new
# namespace; root, iptables, ip and ss are needed.
harness_own_netns() {
  local script=$1; shift
  if [[ -z ${SDLIVE_E2E_OUTER_NETNS:-} ]]; then
    (($(id -u) == 0)) || harness_unavailable "not root"
    command -v iptables >/dev/null && command -v ip >/dev/null && command -v ss >/dev/null ||
      harness_unavailable "iptables, ip or ss not found"
    unshare --net true 2>/dev/null || harness_unavailable "unshare --net is not permitted here"
    SDLIVE_E2E_OUTER_NETNS=$(readlink /proc/self/ns/net)
    export SDLIVE_E2E_OUTER_NETNS
    exec unshare --net -- "$BASH" -c 'ip link set lo up && exec "$0" "$@"' "$BASH" "$script" "$@"
  fi
  [[ $(readlink /proc/self/ns/net) != "$SDLIVE_E2E_OUTER_NETNS" ]] || harness_fail "not in a network namespace of our own"
}

# --- time ------------------------------------------------------------------

# Microseconds since the epoch, from bash itself (no fork).
harness_now_us() { local t=${EPOCHREALTIME/./}; echo $((10#$t)); }

# harness_ms_since <start_us>: milliseconds elapsed.
harness_ms_since() { echo $((($(harness_now_us) - $1) / 1000)); }

# harness_seconds_us <seconds> <var>: sets var to a duration given in
# seconds ("10", "5.5", "0.25") in microseconds, fraction included;
# anything else fails the test.
harness_seconds_us() {
  [[ $1 =~ ^([0-9]+)(\.([0-9]*))?$|^\.([0-9]+)$ ]] || harness_fail "not a duration in seconds: \"$1\""
  local whole=${BASH_REMATCH[1]:-0} frac=${BASH_REMATCH[3]}${BASH_REMATCH[4]}000000
  printf -v "$2" '%d' $((10#$whole * 1000000 + 10#${frac:0:6}))
}

# harness_wait <seconds> <description> <command...>: poll every 50 ms until
# the command succeeds; fail the test at the deadline.
harness_wait() {
  local seconds=$1 what=$2
  shift 2
  local deadline
  harness_seconds_us "$seconds" deadline
  deadline=$((deadline + $(harness_now_us)))
  until "$@"; do
    if (($(harness_now_us) > deadline)); then
      harness_fail "timed out after ${seconds}s waiting for: $what"
    fi
    sleep 0.05
  done
}

# --- what systemd reports ---------------------------------------------------

# harness_prop <unit> <property>: the value, as `systemctl show` reports it.
harness_prop() { systemctl --user show -p "$2" --value -- "$1"; }

harness_prop_is() { [[ $(harness_prop "$1" "$2") == "$3" ]]; }

# harness_deaths <unit>: one line per death, "$SERVICE_RESULT $EXIT_CODE
# $EXIT_STATUS" as the manager passed them to ExecStopPost=.
harness_deaths() { cat -- "$HARNESS_LOG_DIR/deaths/$1" 2>/dev/null || true; }

harness_death_count() { harness_deaths "$1" | wc -l; }

# harness_notified <unit> <regex>: the manager logged a notification from
# this unit matching regex (e.g. 'STOPPING=1').
harness_notified() {
  grep -E -- "^$1: Got notification message from PID [0-9]+ \(.*$2" \
    "$HARNESS_LOG_DIR/manager.log" >/dev/null
}

# harness_show <unit...>: one status line per unit, for humans.
harness_show() {
  local unit
  for unit in "$@"; do
    printf '  %-28s %-10s %-9s NRestarts=%-2s Result=%-9s STATUS="%s"\n' "$unit" \
      "$(harness_prop "$unit" ActiveState)" "$(harness_prop "$unit" SubState)" \
      "$(harness_prop "$unit" NRestarts)" "$(harness_prop "$unit" Result)" \
      "$(harness_prop "$unit" StatusText)" >&2
  done
}

# harness_expect <unit> <property> <value>: assert one property.
harness_expect() {
  local got
  got=$(harness_prop "$1" "$2")
  [[ $got == "$3" ]] || harness_fail "$1: expected $2=$3, systemd reports $2=$got"
}

harness_dump_logs() {
  [[ -n ${HARNESS_LOG_DIR:-} && -d ${HARNESS_LOG_DIR:-} ]] || return 0
  local f
  for f in "$HARNESS_LOG_DIR"/*.log "$HARNESS_LOG_DIR"/deaths/*; do
    [[ -f $f && $(basename "$f") != manager.log ]] || continue
    printf -- '--- %s (last 15 lines)\n' "$f" >&2
    tail -n 15 -- "$f" >&2
  done
  printf -- '--- full manager log: %s/manager.log\n' "$HARNESS_LOG_DIR" >&2
}

# --- the installed tree -----------------------------------------------------

harness_cache_var() {
  sed -n "s/^$1:[A-Z]*=//p" "$SDLIVE_BUILD_DIR/CMakeCache.txt"
}

# harness_units: every shipped unit file name, template units included.
harness_units() {
  local f
  for f in "$HARNESS_STAGE$HARNESS_UNIT_DIR"/sdlive-*.service; do
    [[ -e $f ]] && basename -- "$f"
  done
}

# harness_unit_of <daemon> [instance]: the unit to start for a daemon
# (template units: that instance, default "e2e"), or nothing when this build
# did not ship it.
harness_unit_of() {
  if [[ -e $HARNESS_STAGE$HARNESS_UNIT_DIR/sdlive-$1.service ]]; then
    echo "sdlive-$1.service"
  elif [[ -e $HARNESS_STAGE$HARNESS_UNIT_DIR/sdlive-$1@.service ]]; then
    echo "sdlive-$1@${2:-e2e}.service"
  fi
}

# harness_armed <unit>: the shipped unit arms the watchdog.
harness_armed() {
  local file=$1
  [[ $file == *@*.service ]] && file=${file%%@*}@.service
  grep -q '^WatchdogSec=' "$HARNESS_STAGE$HARNESS_UNIT_DIR/$file"
}

# harness_petting_units <array>: sets the array to the shipped units of the
# daemons that pet (worker, cleaner, cluster); a daemon this build did not
# ship is logged and passed over. Fails the test when one is shipped without
# WatchdogSec=, or when none is shipped.
harness_petting_units() {
  local -n petting_units=$1
  local daemon unit
  petting_units=()
  for daemon in worker cleaner cluster; do
    unit=$(harness_unit_of "$daemon")
    [[ -n $unit ]] || { harness_log "$daemon: not in this build, not checked"; continue; }
    harness_armed "$unit" || harness_fail "$unit: shipped without WatchdogSec=, yet it pets"
    petting_units+=("$unit")
  done
  ((${#petting_units[@]})) || harness_fail "no armed unit was shipped"
}

# harness_pg_start: starts a private PostgreSQL server for this run
# (tests/store/pg-server.sh, its state in $HARNESS_RUN), stopped on exit
# before the teardown (the EXIT trap is replaced: a scenario that sets its
# own must stop it itself). Sets HARNESS_PG_URL to its store URL and
# HARNESS_PG_SOCKET_DIR to its socket's directory, which lives under /tmp
# where PrivateTmp= hides it: a unit that connects binds it
# (BindReadOnlyPaths=).
harness_pg_start() {
  HARNESS_PG=$(dirname -- "${BASH_SOURCE[0]}")/../store/pg-server.sh
  trap 'rc=$?; bash "$HARNESS_PG" stop "$HARNESS_RUN" >/dev/null 2>&1; (exit $rc); harness_teardown' EXIT
  bash "$HARNESS_PG" start "$HARNESS_RUN" >/dev/null || harness_fail "cannot start PostgreSQL"
  HARNESS_PG_URL=$(bash "$HARNESS_PG" url "$HARNESS_RUN")
  HARNESS_PG_SOCKET_DIR=$(sed -n 's/^postgresql:host=\([^ ]*\) .*/\1/p' <<<"$HARNESS_PG_URL")
}

# harness_binary <daemon>: the installed executable (for runs outside systemd).
harness_binary() { echo "$HARNESS_PREFIX/bin/sdlive-$1"; }

# harness_wedge_file <unit>: touching it wedges the unit's main loop.
harness_wedge_file() { echo "$HARNESS_WEDGE_DIR/$1"; }

# harness_hang_executor_file <unit>: touching it hangs a worker's executor.
harness_hang_executor_file() { echo "$HARNESS_WEDGE_DIR/$1.executor"; }

# --- drop-ins ----------------------------------------------------------------

# harness_dropin <unit> <name> <[Service] lines>: add a drop-in (no reload).
harness_dropin() {
  local dir="$HARNESS_UNIT_HOME/$1.d"
  mkdir -p -- "$dir"
  printf '[Service]\n%s\n' "$3" >"$dir/$2.conf"
}

harness_reload() { systemctl --user daemon-reload; }

# harness_unix_request <socket path> <line>: send one line on a unix stream
# socket, print the one-line reply (2 s timeout).
harness_unix_request() {
  timeout 2 perl -MIO::Socket::UNIX -e '
    my $s = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => $ARGV[0]) or die "connect: $!\n";
    print $s "$ARGV[1]\n";
    my $reply = <$s>;
    defined $reply or die "no reply\n";
    print $reply;' -- "$1" "$2"
}

# harness_state_dir <daemon>: its StateDirectory= as the manager creates it
# for a DynamicUser= unit (user manager: under $XDG_CONFIG_HOME).
harness_state_dir() { echo "$XDG_CONFIG_HOME/private/sdlive-$1"; }

# harness_record_lines: the [Service] lines that keep a unit's output in
# <log>/<unit>.log and record each of its deaths ("result code status", one
# line each) in <log>/deaths/<unit>, which harness_deaths reads.
harness_record_lines() {
  cat <<LINES
StandardOutput=append:$HARNESS_LOG_DIR/%n.log
StandardError=append:$HARNESS_LOG_DIR/%n.log
ExecStopPost=+/bin/sh -c 'echo "\$SERVICE_RESULT \$EXIT_CODE \$EXIT_STATUS" >> $HARNESS_LOG_DIR/deaths/%n'
LINES
}

# Copies the shipped units and gives each the test drop-in: output to
# <log>/<unit>.log, a death record, the fault-injection files,
# RestartSec=500ms and, only where the shipped unit arms it,
# WatchdogSec=$SDLIVE_E2E_WATCHDOG; then test-sized daemon intervals
# (harness_scaled_args; for template units, on every instance).
harness_units_install() {
  local unit lines args
  mkdir -p -- "$HARNESS_UNIT_HOME"
  for unit in $(harness_units); do
    cp -- "$HARNESS_STAGE$HARNESS_UNIT_DIR/$unit" "$HARNESS_UNIT_HOME/$unit"
    lines="$(harness_record_lines)
Environment=SDLIVE_WEDGE_FILE=$HARNESS_WEDGE_DIR/%n
Environment=SDLIVE_HANG_EXECUTOR_FILE=$HARNESS_WEDGE_DIR/%n.executor
RestartSec=500ms"
    if grep -q '^WatchdogSec=' "$HARNESS_UNIT_HOME/$unit"; then
      lines+=$'\n'"WatchdogSec=$SDLIVE_E2E_WATCHDOG"
    fi
    harness_dropin "$unit" 10-e2e "$lines"
  done
  for unit in $(harness_units); do
    args=$(harness_scaled_args "$unit")
    [[ -z $args ]] || harness_exec_start "$unit" $args
  done
  harness_reload
}

# --- start and teardown -------------------------------------------------------

HARNESS_MOUNTS=()

harness_mount() {
  mount "$@" || harness_unavailable "mount $* failed"
  HARNESS_MOUNTS+=("${@: -1}")
}

# Managers started from the same cgroup share their units' cgroups (on a
# legacy or hybrid hierarchy a user manager in /init.scope puts its units in
# /app.slice/<unit>): a harness running at the same time, another scenario
# or another build tree's, would have its manager kill this run's units
# when it stops its own, and the other way round. So every run moves itself,
# before it starts its manager, into a cgroup of its own, sdlive-e2e-<pid>,
# on each hierarchy it may write; the empty ones of finished runs are
# removed. A pure cgroup2 host is left as it is.
harness_isolate_cgroup() {
  local hierarchy old try
  for hierarchy in /sys/fs/cgroup/systemd /sys/fs/cgroup/unified; do
    [[ -w $hierarchy/cgroup.procs ]] || continue
    for old in "$hierarchy"/sdlive-e2e-*; do
      [[ -d $old ]] && find "$old" -depth -type d -exec rmdir {} + 2>/dev/null || true
    done
    # Another run's clean-up may remove the directory between the two
    # steps: try twice.
    for try in 1 2; do
      mkdir -p "$hierarchy/sdlive-e2e-$$" 2>/dev/null &&
        echo $$ >"$hierarchy/sdlive-e2e-$$/cgroup.procs" 2>/dev/null && break
    done ||
      harness_log "cannot isolate this run in a cgroup of its own under $hierarchy"
  done
}

# harness_start "$@": call first, with the script's arguments.
harness_start() {
  [[ -n ${SDLIVE_BUILD_DIR:-} && -f ${SDLIVE_BUILD_DIR:-}/CMakeCache.txt ]] ||
    harness_fail "SDLIVE_BUILD_DIR must name a configured and built build tree"

  if [[ -z ${SDLIVE_E2E_NAMESPACE:-} ]]; then
    (($(id -u) == 0)) || harness_unavailable "not root"
    [[ -x ${HARNESS_MANAGER%% *} ]] || harness_unavailable "$HARNESS_MANAGER not found"
    command -v systemctl >/dev/null || harness_unavailable "systemctl not found"
    unshare -m --propagation private true 2>/dev/null ||
      harness_unavailable "unshare -m is not permitted here"
    harness_isolate_cgroup
    # Should whoever runs this die, the run in the namespace gets SIGTERM.
    export SDLIVE_E2E_NAMESPACE=1
    exec setpriv --pdeathsig TERM unshare -m --propagation private -- "$BASH" "$0" "$@"
  fi

  trap harness_teardown EXIT
  trap 'exit 130' INT TERM

  HARNESS_LOG_DIR=${SDLIVE_E2E_LOG_DIR:-$(mktemp -d /tmp/sdlive-e2e-logs.XXXXXX)}
  rm -rf -- "$HARNESS_LOG_DIR"
  mkdir -p -- "$HARNESS_LOG_DIR/deaths"
  harness_log "logs in $HARNESS_LOG_DIR"

  # Sandboxed units see the manager's /run only if it is a mount point.
  mountpoint -q /run || harness_mount --bind /run /run

  # What a system manager would have made: /run/systemd/system (the manager
  # refuses to start without it) and the inaccessible nodes that
  # ProtectHome= and friends mount over what they hide.
  mkdir -p /run/systemd
  harness_mount -t tmpfs -o mode=0755 tmpfs /run/systemd
  mkdir -p /run/systemd/system /run/systemd/inaccessible
  (
    cd /run/systemd/inaccessible
    mkdir dir && touch reg && mkfifo fifo && mknod chr c 0 0 && mknod blk b 0 0
    perl -MIO::Socket::UNIX -e \
      'IO::Socket::UNIX->new(Type => SOCK_STREAM(), Local => "sock", Listen => 1) or die "$!\n"'
    chmod 0000 dir reg fifo sock chr blk
  ) || harness_unavailable "cannot create /run/systemd/inaccessible"

  # Everything else of ours lives on one tmpfs under /run, visible to units;
  # its mount point is on the namespace's own /run/systemd, so nothing of
  # this run is ever left on the host.
  HARNESS_RUN=/run/systemd/sdlive-e2e
  mkdir -m 0755 -- "$HARNESS_RUN"
  harness_mount -t tmpfs -o mode=0755 tmpfs "$HARNESS_RUN"
  mkdir -m 0755 "$HARNESS_RUN/xdg-runtime" "$HARNESS_RUN/wedge"
  harness_mount -t tmpfs -o mode=0700 tmpfs "$HARNESS_RUN/xdg-runtime"
  export XDG_RUNTIME_DIR=$HARNESS_RUN/xdg-runtime
  export XDG_CONFIG_HOME=$HARNESS_RUN/config
  HARNESS_UNIT_HOME=$XDG_CONFIG_HOME/systemd/user
  HARNESS_WEDGE_DIR=$HARNESS_RUN/wedge
  mkdir -p -- "$HARNESS_UNIT_HOME"

  harness_install_build
  harness_recorder_start
  harness_manager_start
}

# Installs the build with DESTDIR and overlays it on the configured prefix,
# with an ld.so.cache that knows the installed library.
harness_install_build() {
  HARNESS_PREFIX=$(harness_cache_var CMAKE_INSTALL_PREFIX)
  HARNESS_UNIT_DIR=$(harness_cache_var SDLIVE_SYSTEMD_UNIT_DIR)
  HARNESS_STAGE=$HARNESS_RUN/stage
  [[ -n $HARNESS_PREFIX && -n $HARNESS_UNIT_DIR ]] ||
    harness_fail "$SDLIVE_BUILD_DIR/CMakeCache.txt lacks CMAKE_INSTALL_PREFIX or SDLIVE_SYSTEMD_UNIT_DIR"
  case $HARNESS_PREFIX/ in
    /tmp/* | /var/tmp/* | /home/* | /root/* | /run/user/*)
      harness_fail "install prefix $HARNESS_PREFIX is hidden by the units' sandbox (PrivateTmp=, ProtectHome=); configure another CMAKE_INSTALL_PREFIX" ;;
  esac
  [[ -d $HARNESS_PREFIX ]] ||
    harness_fail "install prefix $HARNESS_PREFIX does not exist on this host"

  if [[ -n ${SDLIVE_E2E_PACKAGE_ROOT:-} ]]; then
    HARNESS_STAGE=$SDLIVE_E2E_PACKAGE_ROOT
  else
    DESTDIR=$HARNESS_STAGE cmake --install "$SDLIVE_BUILD_DIR" >"$HARNESS_LOG_DIR/install.log" ||
      harness_fail "cmake --install failed, see $HARNESS_LOG_DIR/install.log"
  fi
  [[ -n $(harness_units) ]] ||
    harness_fail "the build installed no units into $HARNESS_UNIT_DIR (no daemons built?)"

  harness_mount -t overlay overlay \
    -o "lowerdir=$HARNESS_STAGE$HARNESS_PREFIX:$HARNESS_PREFIX" "$HARNESS_PREFIX"
  ldconfig -X -C "$HARNESS_RUN/ld.so.cache" ||
    harness_unavailable "ldconfig cannot build a private cache"
  harness_mount --bind "$HARNESS_RUN/ld.so.cache" /etc/ld.so.cache
}

harness_manager_answers() { systemctl --user show -p Version >/dev/null 2>&1; }

harness_manager_start() {
  # Outside PID 1 the manager logs only to a terminal at /dev/console: give
  # it a pseudo-terminal recorded by script(1), bound over /dev/console.
  # Should this shell die without its EXIT trap, SIGTERM reaches script(1)
  # and the manager, which then stops its units and exits.
  # A clean environment: the user manager hands its own to every unit.
  env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 TERM=dumb \
    XDG_RUNTIME_DIR="$XDG_RUNTIME_DIR" XDG_CONFIG_HOME="$XDG_CONFIG_HOME" \
    XDG_STATE_HOME="$HARNESS_RUN/state" XDG_CACHE_HOME="$HARNESS_RUN/cache" \
    XDG_DATA_HOME="$HARNESS_RUN/data" \
    setpriv --pdeathsig TERM script --quiet --flush --command \
    "mount --bind \"\$(tty)\" /dev/console && exec setpriv --pdeathsig TERM $HARNESS_MANAGER --user --log-target=console --log-level=debug --log-color=no" \
    "$HARNESS_LOG_DIR/manager.log" </dev/null >/dev/null 2>&1 &
  HARNESS_SCRIPT_PID=$!
  HARNESS_MOUNTS+=(/dev/console)

  local deadline=$(($(harness_now_us) + 10000000))
  until [[ -S $XDG_RUNTIME_DIR/systemd/private ]]; do
    if ! kill -0 "$HARNESS_SCRIPT_PID" 2>/dev/null; then
      tail -n 20 "$HARNESS_LOG_DIR/manager.log" >&2 || true
      harness_unavailable "the user manager exited at startup"
    fi
    (($(harness_now_us) < deadline)) ||
      harness_unavailable "the user manager did not create its private socket in 10 s"
    sleep 0.05
  done
  HARNESS_MANAGER_PID=$(pgrep -P "$HARNESS_SCRIPT_PID" -x systemd) ||
    harness_unavailable "cannot find the manager's process"
  # As on a system manager, so a DynamicUser= service can notify.
  chmod 0755 "$XDG_RUNTIME_DIR" "$XDG_RUNTIME_DIR/systemd"
  harness_wait 10 "the manager's notify socket" test -S "$XDG_RUNTIME_DIR/systemd/notify"
  chmod 0777 "$XDG_RUNTIME_DIR/systemd/notify"
  harness_wait 10 "the manager to answer" harness_manager_answers
  harness_log "private systemd user manager up (pid $HARNESS_MANAGER_PID)"
}

harness_teardown() {
  local rc=$? i
  trap - EXIT
  set +e
  if [[ -n ${HARNESS_MANAGER_PID:-} ]] && kill -0 "$HARNESS_MANAGER_PID" 2>/dev/null; then
    timeout 10 systemctl --user exit >/dev/null 2>&1
    for ((i = 0; i < 100; i++)); do
      kill -0 "$HARNESS_MANAGER_PID" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$HARNESS_MANAGER_PID" 2>/dev/null; then
      harness_log "manager did not exit, killing it"
      kill -KILL "$HARNESS_MANAGER_PID"
    fi
  fi
  [[ -n ${HARNESS_SCRIPT_PID:-} ]] && wait "$HARNESS_SCRIPT_PID" 2>/dev/null
  harness_timelines
  for ((i = ${#HARNESS_MOUNTS[@]} - 1; i >= 0; i--)); do
    umount -l -- "${HARNESS_MOUNTS[i]}" 2>/dev/null
  done
  exit "$rc"
}

# The scenario steps and the timeline, in files of their own.
source "$(dirname -- "${BASH_SOURCE[0]}")/harness-cluster.sh"
source "$(dirname -- "${BASH_SOURCE[0]}")/harness-timeline.sh"
