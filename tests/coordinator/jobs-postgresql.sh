#!/usr/bin/env bash
# The fault runs on a PostgreSQL store: a private server
# (tests/store/pg-server.sh) shared by every round of jobs-faults.
#   jobs-postgresql.sh STATE_DIR JOBS_FAULTS_ARGS...
set -euo pipefail
state=$1
shift
pg=$(dirname -- "${BASH_SOURCE[0]}")/../store/pg-server.sh
mkdir -p -- "$state"
trap 'bash "$pg" stop "$state" >/dev/null 2>&1 || true' EXIT
bash "$pg" start "$state" >/dev/null
url=$(bash "$pg" url "$state")
"$@" --store "$url"
