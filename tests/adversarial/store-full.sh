#!/usr/bin/env bash
# The store's file system fills up: store-adversity full on a 512 KiB tmpfs
# mounted in a private mount namespace (needs root; exit 77 otherwise).
#
#   store-full.sh STORE_ADVERSITY_BINARY
set -euo pipefail

bin=$1
if (($(id -u) != 0)); then
  echo "SKIP: needs root to mount a small file system"
  exit 77
fi
dir=$(mktemp -d /tmp/sdlive-store-full.XXXXXX)
trap 'rm -rf "$dir"' EXIT
unshare -m --propagation private bash -c '
  set -e
  mount -t tmpfs -o size=512k,mode=0755 sdlive-full "$1"
  "$2" full "$1"
' - "$dir" "$bin"
