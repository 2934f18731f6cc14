#!/usr/bin/env bash
# Installs the Debian packages sdlive needs to build, test and run its demo,
# only those that are missing. Safe to run again.
set -euo pipefail

packages=(
  gcc g++ clang libclang-rt-14-dev cmake make pkg-config binutils
  libsystemd-dev libcmocka-dev
  libsqlite3-dev libpq-dev postgresql postgresql-client
  systemd util-linux bsdutils procps psmisc perl python3 sqlite3
  libssl-dev openssl
  libevent-dev libuv1-dev libglib2.0-dev
  mandoc man-db lintian abigail-tools dpkg-dev fakeroot file
  cppcheck clang-tidy gcovr
  iproute2 nftables iptables libnetfilter-queue-dev
  etcd-server etcd-client libcurl4-openssl-dev libjson-c-dev
  libelf-dev python3-cffi python3-pytest python3-setuptools python3-pip python3-wheel
  python3-mypy
  librsvg2-bin valgrind
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "sdlive: installing missing packages: ${missing[*]}" >&2
  if [[ $(id -u) -ne 0 ]]; then
    echo "sdlive: not root; install them with: sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
