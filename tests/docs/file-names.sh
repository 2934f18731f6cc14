#!/bin/sh
# file-names.sh TOP: every C source and header of src/, examples/, tools/,
# tests/ and bindings/ is named in the spelling of its identifiers (lower
# case, underscores; docs/architecture.md, "File names"). Prints each one
# that is not, and exits 1 if there is one; exits 1 too when it finds too
# few files to have looked at the tree.
set -u
top=$1
cd "$top" || exit 1
bad=$(find src examples tools tests bindings -type f \( -name '*.c' -o -name '*.h' \) \
        ! -name '.*' | grep -E '/[^/]*[^a-z0-9_./][^/]*$' | sort)
total=$(find src examples tools tests bindings -type f \( -name '*.c' -o -name '*.h' \) | wc -l)
[ -z "$bad" ] || { printf '%s\n' "$bad" | sed 's/$/: not named lower_case_with_underscores.c/'; }
echo "file names: $total C files looked at"
[ "$total" -ge 300 ] || { echo "too few C files: is $top the source tree?"; exit 1; }
[ -z "$bad" ]
