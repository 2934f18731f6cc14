#!/bin/sh
# Every connection the acceptor holds fits the FD store its unit allows:
# CLIENTS_MAX (clients.h) equals FileDescriptorStoreMax= of the rendered
# unit. A smaller store would refuse some connections, and a restart would
# drop them.
#   acceptor-store-bound.sh <clients.h> <sdlive-acceptor.service>
set -eu

max=$(sed -n 's/^#define CLIENTS_MAX \([0-9][0-9]*\).*/\1/p' "$1")
store=$(sed -n 's/^FileDescriptorStoreMax=//p' "$2")
echo "CLIENTS_MAX=$max FileDescriptorStoreMax=$store"
[ -n "$max" ] || { echo "FAIL: no CLIENTS_MAX in $1"; exit 1; }
[ "$max" = "$store" ] || { echo "FAIL: the store holds $store, the acceptor up to $max"; exit 1; }
