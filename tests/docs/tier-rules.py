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


def tool_self_test(top, entries):
    """The checker must see a tool reaching another tool's private header."""
    problems = []
    lint = next((e for e in entries if part_of(top, e["file"]) == ("tool", "lint")), None)
    if lint is None:
        return ["self-test: no translation unit of tools/lint in the build"]
    other_tool = os.path.join(os.path.dirname(lint["file"]), ".tier-self-test-tool.c")
    try:
        with open(other_tool, "w") as f:
            f.write('#include "../probe/loop.h"\nint tier_self_test;\n')
        if not any("reaches into tool probe" in v
                   for v in violations(top, other_tool, dependencies(lint, other_tool))):
            problems.append("self-test: sdlive-lint including sdlive-probe's loop.h was not reported")
    except subprocess.CalledProcessError as e:
        problems.append(f"self-test: the tool probe did not preprocess: {e.stderr.strip()}")
    finally:
        os.unlink(other_tool)
    return problems


def self_test(top, entries, platform):
    """The checker must see a daemon reaching a private header. With the
    cluster platform built, also the store's own rules."""
    worker = next((e for e in entries if part_of(top, e["file"]) == ("daemon", "worker")), None)
    if worker is None:
        return ["self-test: no translation unit of examples/worker in the build"]
    problems = []
    private = os.path.join(os.path.dirname(worker["file"]), ".tier-self-test-src.c")
    try:
        with open(private, "w") as f:
            f.write('#include "../../src/sdlive_internal.h"\nint tier_self_test;\n')
        if not any("libsdlive's private header" in v
                   for v in violations(top, private, dependencies(worker, private))):
            problems.append("self-test: a daemon including libsdlive's private header was not reported")
    except subprocess.CalledProcessError as e:
        problems.append(f"self-test: the src probe did not preprocess: {e.stderr.strip()}")
    finally:
        os.unlink(private)
    problems += tool_self_test(top, entries)
    if not platform:
        return problems
    store = next((e for e in entries if part_of(top, e["file"]) == ("lib", "store")), None)
    if store is None:
        return ["self-test: no translation unit of examples/lib/store in the build"]
    codec = os.path.join(os.path.dirname(store["file"]), ".tier-self-test-codec.c")
    try:
        with open(codec, "w") as f:
            f.write('#include "frame.h"\nint tier_self_test;\n')
        if not any("may use only frame_token.h of part frame" in v
                   for v in violations(top, codec, dependencies(store, codec))):
            problems.append("self-test: the store including frame's codec (frame.h) was not reported")
    except subprocess.CalledProcessError as e:
        problems.append(f"self-test: the codec probe did not preprocess: {e.stderr.strip()}")
    finally:
        os.unlink(codec)
    with tempfile.TemporaryDirectory() as tmp:
        by_path = os.path.join(os.path.dirname(worker["file"]), ".tier-self-test-path.c")
        try:
            with open(by_path, "w") as f:
                f.write('#include "../lib/store/store_url.h"\nint tier_self_test;\n')
            caught = violations(top, by_path, dependencies(worker, by_path))
            if not any("private header of part store" in v for v in caught):
                problems.append("self-test: a daemon including the store's private header "
                                "by path was not reported")
        except subprocess.CalledProcessError as e:
            problems.append(f"self-test: the by-path probe did not preprocess: {e.stderr.strip()}")
        finally:
            os.unlink(by_path)
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
