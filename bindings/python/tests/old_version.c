/* SPDX-License-Identifier: MIT */
/* A library that calls itself an older libsdlive, for the binding's
 * version check. Test-only. */
const char *sdlive_version(void);
const char *sdlive_version(void) {
        return "0.1.9";
}
