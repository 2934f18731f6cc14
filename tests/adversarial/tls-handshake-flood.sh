#!/usr/bin/env bash
# A throwaway PKI (openssl CLI) for tls-handshake-flood, which floods the
# coordinator's TLS listener with connections that never send a byte and
# measures a certified worker beside them.
#
#   tls-handshake-flood.sh TLS_HANDSHAKE_FLOOD_BINARY
set -euo pipefail

bin=$1
T=$(mktemp -d /tmp/sdlive-tls-flood.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
umask 077
cd "$T"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=ca \
  -keyout ca.key -out ca.pem -addext basicConstraints=critical,CA:TRUE \
  -addext keyUsage=critical,keyCertSign 2>/dev/null || fail "openssl: CA"
leaf() { # NAME EKU SAN
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$1" \
    -keyout "$1.key" -out "$1.csr" 2>/dev/null &&
    openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
      -extfile <(printf 'extendedKeyUsage=%s\nsubjectAltName=%s\n' "$2" "$3") \
      -out "$1.pem" 2>/dev/null || fail "openssl: certificate $1"
}
leaf coordinator serverAuth IP:127.0.0.1
leaf w1 clientAuth DNS:w1
chmod 644 ./*.pem
"$bin" "$T"
