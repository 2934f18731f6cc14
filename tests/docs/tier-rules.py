#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The rules of the examples/ and tools/ tiers, checked on what the compiler
really reads.

Every translation unit under examples/ and tools/ is preprocessed with its own flags
from the build's compile_commands.json (gcc/clang -MM: the headers it
includes, system headers left out), and each header it reaches is held
against the rules:

  * a part of examples/lib/ (or a daemon) reaches another part only through
    that part's public headers, examples/lib/<part>/include/;
  * nothing under examples/ reaches libsdlive's private headers (src/): the
    library is used through <sdlive.h> alone;
  * each part reaches only the parts it is declared to depend on (PARTS
    below): store, frame and tls never reach into common, and use no
    libsdlive; a daemon never reaches into another daemon;
  * a tool (tools/<name>) may use what a daemon may; it reaches no daemon,
    and another tool only through the headers TOOL_USES names (sdlive-lint
    reads a unit's sdlive-probe options with sdlive-probe's own parser);
  * a part's public header includes only public headers;
  * where ONLY_HEADERS narrows it, a part uses only the headers named there
    of another part (the store: frame's token size, not the codec).

Before checking the tree, the checker checks itself: a store translation
unit that includes frame's codec must be reported; a daemon translation
unit that includes a private header of the store (by a relative path, the
one way a private directory is still reachable) must be reported, and one
that names a private header without a path must fail to compile (the
private directory is not on a daemon's include path).

Usage: tier-rules.py TOP BUILD_DIR [--platform]
  --platform  the cluster platform is built (SDLIVE_BUILD_CLUSTER): the
              store's rules are checked on themselves too
Exit status 0 when every rule holds; 1 with one line per violation.
"""
import json
import os
import shlex
import subprocess
import sys
import tempfile

# Which parts each lib part may reach (besides itself). "sdlive" is the
# library's public header; "monotonic" the clock helper.
PARTS = {
    "monotonic": set(),
    "trusted_dir": set(),
    "frame": {"monotonic"},
    "tls": {"frame", "monotonic"},
    "store": {"frame", "monotonic", "trusted_dir"},
    "etcd": {"monotonic"},
    "common": {"monotonic", "sdlive", "trusted_dir"},
    "coordinator": {"store", "frame", "tls", "common", "monotonic", "sdlive", "trusted_dir"},
    "lease": {"store", "frame", "etcd", "common", "monotonic", "sdlive", "trusted_dir"},
}
DAEMON_MAY_REACH = set(PARTS) | {"sdlive"}
# Where a part may use only some of another part's public headers: the
# store takes the assignment token's size from frame, not the codec.
ONLY_HEADERS = {
    ("store", "frame"): {"frame_token.h"},
    ("lease", "frame"): {"frame_token.h"},
}
# Which headers of another tool a tool may include.
TOOL_USES = {
    ("lint", "probe"): {"config.h"},
}


def part_of(top, path):
    """('lib', name) for examples/lib/<name>/..., ('daemon', name) for
    examples/<name>/..., ('tool', name) for tools/<name>/..., ('sdlive',
    None) for include/, ('src', None) for src/, None for anything else."""
    rel = os.path.relpath(os.path.realpath(path), top)
    bits = rel.split(os.sep)
    if bits[0] == "include":
        return ("sdlive", None)
    if bits[0] == "src":
        return ("src", None)
    if bits[0] == "tools" and len(bits) >= 3:
        return ("tool", bits[1])
    if bits[0] != "examples" or len(bits) < 3:
        return None
    if bits[1] == "lib" and len(bits) >= 4:
        return ("lib", bits[2])
    return ("daemon", bits[1])


def is_public(top, path):
    rel = os.path.relpath(os.path.realpath(path), top).split(os.sep)
    return rel[0] == "include" or (rel[:2] == ["examples", "lib"] and len(rel) >= 5
                                   and rel[3] == "include")


def dependencies(entry, source=None):
    """The headers a translation unit includes (gcc -MM), or raise
    CalledProcessError when it does not preprocess."""
    argv = shlex.split(entry["command"]) if "command" in entry else list(entry["arguments"])
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if arg in ("-c", "-MD", "-MMD") or arg == entry["file"]:
            continue
        out.append(arg)
    out += ["-MM", source or entry["file"]]
    text = subprocess.run(out, cwd=entry["directory"], check=True, capture_output=True,
                          text=True).stdout
    names = text.replace("\\\n", " ").split(":", 1)[1].split()
    return [os.path.normpath(os.path.join(entry["directory"], n)) for n in names[1:]]


def violations(top, source, headers):
    """One line per header the translation unit SOURCE may not reach."""
    found = []
    me = part_of(top, source)
    source = os.path.relpath(source, top)
    if me is None:
        return found
    kind, name = me
    allowed = PARTS.get(name, set()) if kind == "lib" else DAEMON_MAY_REACH
    for h in headers:
        other = part_of(top, h)
        if other is None or other == me:
            continue
        okind, oname = other
        rel = os.path.relpath(h, top)
        if okind == "src":
            found.append(f"{source}: reaches libsdlive's private header {rel} (use <sdlive.h>)")
        elif okind == "sdlive":
            if "sdlive" not in allowed:
                found.append(f"{source}: part {name} may not use libsdlive ({rel})")
        elif okind == "daemon":
            found.append(f"{source}: reaches into another daemon: {rel}")
        elif okind == "tool":
            uses = TOOL_USES.get((name, oname), set()) if kind == "tool" else set()
            if os.path.basename(h) not in uses:
                found.append(f"{source}: reaches into tool {oname}: {rel}")
        elif not is_public(top, h):
            found.append(f"{source}: reaches a private header of part {oname}: {rel}")
        elif oname not in allowed:
            found.append(f"{source}: part {name} may not depend on part {oname} ({rel})")
        elif os.path.basename(h) not in ONLY_HEADERS.get((name, oname), {os.path.basename(h)}):
            found.append(f"{source}: part {name} may use only "
                         f"{', '.join(sorted(ONLY_HEADERS[(name, oname)]))} of part {oname} ({rel})")
    return found


def public_header_rules(top):
    """A public header includes only what resolves to public headers."""
    found = []
    lib = os.path.join(top, "examples", "lib")
    for name in sorted(os.listdir(lib)):
        inc = os.path.join(lib, name, "include")
        if not os.path.isdir(inc):
            found.append(f"examples/lib/{name}: no include/ folder for its public headers")
            continue
        for header in sorted(os.listdir(inc)):
            with open(os.path.join(inc, header)) as f:
                for line in f:
                    line = line.strip()
                    if line.startswith("#include \"") and "/" in line.split("\"")[1]:
                        found.append(f"examples/lib/{name}/include/{header}: includes by path: {line}")
    return found


def planted(top, entry, name, include, expected, what):
    """Plants a translation unit that includes `include` beside entry's
    source (with entry's flags) and returns the problems of the self-test:
    none when a violation saying `expected` is reported."""
    source = os.path.join(os.path.dirname(entry["file"]), f".tier-self-test-{name}.c")
    try:
        with open(source, "w") as f:
            f.write(f'#include "{include}"\nint tier_self_test;\n')
        if any(expected in v for v in violations(top, source, dependencies(entry, source))):
            return []
        return [f"self-test: {what} was not reported"]
    except subprocess.CalledProcessError as e:
        return [f"self-test: the {name} probe did not preprocess: {e.stderr.strip()}"]
    finally:
        os.unlink(source)


def self_test(top, entries, platform):
    """The checker must see a daemon reaching libsdlive's private header and
    a tool reaching another tool's; with the cluster platform built, also
    the store's own rules."""
    def unit_of(part):
        return next((e for e in entries if part_of(top, e["file"]) == part), None)

    worker, lint = unit_of(("daemon", "worker")), unit_of(("tool", "lint"))
    if worker is None or lint is None:
        return ["self-test: no translation unit of examples/worker or tools/lint in the build"]
    problems = planted(top, worker, "src", "../../src/sdlive_internal.h", "libsdlive's private header",
                       "a daemon including libsdlive's private header")
    problems += planted(top, lint, "tool", "../probe/loop.h", "reaches into tool probe",
                        "sdlive-lint including sdlive-probe's loop.h")
    if not platform:
        return problems
    store = unit_of(("lib", "store"))
    if store is None:
        return problems + ["self-test: no translation unit of examples/lib/store in the build"]
    problems += planted(top, store, "codec", "frame.h", "may use only frame_token.h of part frame",
                        "the store including frame's codec (frame.h)")
    problems += planted(top, worker, "path", "../lib/store/store_url.h", "private header of part store",
                        "a daemon including the store's private header by path")
    with tempfile.TemporaryDirectory() as tmp:
        bare = os.path.join(tmp, "bare.c")
        with open(bare, "w") as f:
            f.write('#include "store_backend.h"\nint tier_self_test;\n')
        try:
            dependencies(worker, bare)
            problems.append("self-test: a daemon can name the store's private header "
                            "store_backend.h: the private folder is on its include path")
        except subprocess.CalledProcessError:
            pass
    return problems


def main():
    if len(sys.argv) not in (3, 4) or sys.argv[3:] not in ([], ["--platform"]):
        print(__doc__, file=sys.stderr)
        return 2
    top, build = os.path.realpath(sys.argv[1]), sys.argv[2]
    platform = sys.argv[3:] == ["--platform"]
    with open(os.path.join(build, "compile_commands.json")) as f:
        entries = [e for e in json.load(f)
                   if part_of(top, e["file"]) and part_of(top, e["file"])[0] in ("lib", "daemon", "tool")]
    problems = self_test(top, entries, platform)
    checked = 0
    for entry in entries:
        try:
            headers = dependencies(entry)
        except subprocess.CalledProcessError as e:
            problems.append(f"{entry['file']}: does not preprocess: {e.stderr.strip()}")
            continue
        problems += violations(top, entry["file"], headers)
        checked += 1
    problems += public_header_rules(top)
    for p in problems:
        print(p)
    tools = sum(1 for e in entries if part_of(top, e["file"])[0] == "tool")
    if tools == 0:
        problems.append("no translation unit of tools/ in the build")
    print(f"examples/ and tools/ tiers: {checked} translation units checked ({tools} of tools/), {len(problems)} violations")
    if checked < 40:
        print("too few translation units: is compile_commands.json from a full build?")
        return 1
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
