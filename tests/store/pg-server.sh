#!/usr/bin/env bash
# A private PostgreSQL server for the store tests.
#
#   pg-server.sh start STATE_DIR   initdb into a fresh temporary directory and start
#   pg-server.sh url   STATE_DIR   print the store URL of the running server
#   pg-server.sh down  STATE_DIR   stop the server, keep its data (a store outage)
#   pg-server.sh up    STATE_DIR   start it again after `down`
#   pg-server.sh stop  STATE_DIR   stop the server and delete everything
#
# STATE_DIR (for example the build directory) only remembers where the
# temporary directory is. The server listens on a unix socket in that
# directory and nowhere else (listen_addresses=''), on port SDLIVE_PG_PORT
# (default 54329; it only names the socket file). PostgreSQL refuses to run
# as root, so as root the server runs as the `postgres` system user, which
# owns the temporary directory.
set -euo pipefail

usage() { echo "usage: $0 start|url|down|up|stop STATE_DIR" >&2; exit 2; }
(($# == 2)) || usage
cmd=$1
state_file=$2/pg-server.dir
port=${SDLIVE_PG_PORT:-54329}

bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
if [[ -z $bindir ]]; then
  echo "pg-server.sh: no PostgreSQL server binaries under /usr/lib/postgresql (install the postgresql package)" >&2
  exit 1
fi

as_server_user() {
  if ((EUID == 0)); then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

server_dir() {
  [[ -f $state_file ]] || { echo "pg-server.sh: no server recorded in $state_file" >&2; exit 1; }
  cat "$state_file"
}

pg_ctl_() {
  local dir=$1; shift
  as_server_user "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 "$@" >/dev/null
}

running() {
  as_server_user "$bindir/pg_ctl" -D "$1/data" status >/dev/null 2>&1
}

case $cmd in
start)
  if [[ -f $state_file ]]; then
    "$0" stop "$2" || true
  fi
  dir=$(mktemp -d /tmp/sdlive-pg.XXXXXX)
  chmod 0755 "$dir"
  if ((EUID == 0)); then chown postgres: "$dir"; fi
  echo "$dir" >"$state_file"
  as_server_user "$bindir/initdb" -D "$dir/data" -U postgres --auth=trust --no-sync \
    -E UTF8 --locale=C >"$dir/initdb.log" 2>&1 ||
    { cat "$dir/initdb.log" >&2; exit 1; }
  # Tests need speed, not durability: fsync off.
  cat >>"$dir/data/postgresql.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$dir'
port = $port
fsync = off
full_page_writes = off
max_connections = 60
CONF
  pg_ctl_ "$dir" start || { cat "$dir/server.log" >&2; exit 1; }
  as_server_user "$bindir/createdb" -h "$dir" -p "$port" -U postgres sdlive
  ;;
url)
  dir=$(server_dir)
  echo "postgresql:host=$dir port=$port dbname=sdlive user=postgres"
  ;;
down)
  dir=$(server_dir)
  pg_ctl_ "$dir" stop -m fast
  ;;
up)
  dir=$(server_dir)
  pg_ctl_ "$dir" start || { cat "$dir/server.log" >&2; exit 1; }
  ;;
stop)
  [[ -f $state_file ]] || exit 0
  dir=$(cat "$state_file")
  if [[ -d $dir/data ]] && running "$dir"; then
    pg_ctl_ "$dir" stop -m immediate
  fi
  case $dir in /tmp/sdlive-pg.*) rm -rf "$dir" ;; esac
  rm -f "$state_file"
  ;;
*)
  usage
  ;;
esac
