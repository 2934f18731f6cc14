#!/usr/bin/env bash
# A private PostgreSQL primary with one streaming standby, for the tests of
# what the store requires of replication (test_store_standbys.c).
#
#   pg-standby.sh start STATE_DIR   a primary (pg-server.sh, in STATE_DIR/primary)
#                                   and a base backup of it streaming as
#                                   application_name 'standby1', asynchronously
#   pg-standby.sh url   STATE_DIR   the primary's store URL
#   pg-standby.sh standby-down STATE_DIR   stop the standby only (the primary
#                                   is a single server again)
#   pg-standby.sh stop  STATE_DIR   stop both, delete everything
#
# Both listen on unix sockets in their own temporary directories only.
set -euo pipefail

usage() { echo "usage: $0 start|url|standby-down|stop STATE_DIR" >&2; exit 2; }
(($# == 2)) || usage
cmd=$1 state=$2
here=$(cd "$(dirname "$0")" && pwd)
primary_state=$state/primary
standby_file=$state/pg-standby.dir
port=${SDLIVE_PG_PORT:-54329}
bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[[ -n $bindir ]] || { echo "pg-standby.sh: no PostgreSQL server binaries (install postgresql)" >&2; exit 1; }

as_server_user() {
  if ((EUID == 0)); then runuser -u postgres -- "$@"; else "$@"; fi
}

case $cmd in
start)
  "$0" stop "$state" || true
  mkdir -p "$primary_state"
  "$here/pg-server.sh" start "$primary_state"
  primary=$(cat "$primary_state/pg-server.dir")
  dir=$(mktemp -d /tmp/sdlive-pg-standby.XXXXXX)
  chmod 0755 "$dir"
  if ((EUID == 0)); then chown postgres: "$dir"; fi
  echo "$dir" >"$standby_file"
  as_server_user "$bindir/pg_basebackup" -h "$primary" -p "$port" -U postgres -D "$dir/data" -R --checkpoint=fast \
    >"$dir/basebackup.log" 2>&1 || { cat "$dir/basebackup.log" >&2; exit 1; }
  cat >>"$dir/data/postgresql.auto.conf" <<CONF
primary_conninfo = 'host=$primary port=$port user=postgres application_name=standby1'
unix_socket_directories = '$dir'
CONF
  as_server_user "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 start >/dev/null ||
    { cat "$dir/server.log" >&2; exit 1; }
  # Streaming before we return: the tests start from a standby the primary sees.
  for _ in $(seq 100); do
    n=$(as_server_user "$bindir/psql" -h "$primary" -p "$port" -U postgres -d sdlive -Atc \
        "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'")
    [[ $n == 1 ]] && exit 0
    sleep 0.1
  done
  echo "pg-standby.sh: the standby did not start streaming within 10 s" >&2
  cat "$dir/server.log" >&2
  exit 1
  ;;
url)
  "$here/pg-server.sh" url "$primary_state"
  ;;
standby-down)
  dir=$(cat "$standby_file")
  as_server_user "$bindir/pg_ctl" -D "$dir/data" -w -t 30 stop -m fast >/dev/null
  ;;
stop)
  if [[ -f $standby_file ]]; then
    dir=$(cat "$standby_file")
    if [[ -d $dir/data ]]; then
      as_server_user "$bindir/pg_ctl" -D "$dir/data" -w -t 30 stop -m immediate >/dev/null 2>&1 || true
    fi
    case $dir in /tmp/sdlive-pg-standby.*) rm -rf "$dir" ;; esac
    rm -f "$standby_file"
  fi
  if [[ -d $primary_state ]]; then "$here/pg-server.sh" stop "$primary_state"; fi
  ;;
*)
  usage
  ;;
esac
