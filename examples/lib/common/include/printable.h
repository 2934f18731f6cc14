/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_EXAMPLE_PRINTABLE_H
#define SDLIVE_EXAMPLE_PRINTABLE_H

#include <stddef.h>

/*
 * Text that came from outside (a name read from the store or from etcd)
 * made safe to print on an operator's terminal or in a line a script
 * reads. Valid UTF-8 passes unchanged, except what would act on the
 * terminal or the line: each byte of a C0 control (newline included), of
 * DEL, of a C1 control (U+0080 to U+009F), of a bidirectional or line
 * separator control (U+061C, U+200E, U+200F, U+2028 to U+202E, U+2066 to
 * U+2069), and each byte that is not part of valid UTF-8 is written as
 * \xHH; a backslash is written \\, so every backslash in the result starts
 * an escape. The result is valid UTF-8 with none of those characters.
 *
 * Writes into out (size bytes, at least 1) and returns out, always
 * NUL-terminated; text longer than fits is cut after the last whole
 * character or escape that fits. PRINTABLE_SIZE(n) holds the result for
 * any text of n bytes.
 */
const char *printable(const char *text, char *out, size_t size);

#define PRINTABLE_SIZE(n) (4 * (size_t) (n) + 1)

#endif
