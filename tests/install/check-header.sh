#!/bin/sh
# sdlive.h is self-contained and warning-free as C99 -pedantic and as C++.
#   check-header.sh <include dir> <cc> <c++>
set -eu

inc=$1 cc=$2 cxx=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat >"$work/use.c" <<'USE'
#include <sdlive.h>
int use_sdlive(void);
int use_sdlive(void) {
        sdlive_options o = SDLIVE_OPTIONS_INIT;
        sdlive *d = 0;
        int r = sdlive_new(&d, &o);
        r += sdlive_notify_status(d, "%d items", 3);
        r += sdlive_idle(d, SDLIVE_USEC_PER_SEC) == SDLIVE_WAKE_TIMEOUT;
        sdlive_free(d);
        return r + (SDLIVE_VERSION > 0) + SDLIVE_HANDLE_SIGNALS;
}
USE
cp "$work/use.c" "$work/use.cc"

set -x
"$cc" -std=c99 -pedantic -Wall -Wextra -Werror -I"$inc" -c -o "$work/c99.o" "$work/use.c"
"$cc" -std=c11 -pedantic -Wall -Wextra -Werror -I"$inc" -c -o "$work/c11.o" "$work/use.c"
"$cxx" -std=c++11 -pedantic -Wall -Wextra -Werror -I"$inc" -c -o "$work/cxx11.o" "$work/use.cc"
"$cxx" -std=c++17 -pedantic -Wall -Wextra -Werror -I"$inc" -c -o "$work/cxx17.o" "$work/use.cc"
# C linkage: the C++ object refers to the unmangled names.
nm "$work/cxx11.o" | grep -q ' U sdlive_new$'
