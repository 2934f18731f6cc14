#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Inside a static library the calls between its files go one way.

Reads the archive's symbol table (nm): an object that leaves a symbol
undefined which another object of the archive defines calls that file.
A circle of such calls (writer.c -> connections.c -> conn.c -> writer.c,
say) fails the check, with the circle printed. Before checking the
archive, the checker checks itself on a made-up table that has a circle.

Usage: call-circles.py NM ARCHIVE
Exit status 0 when there is no circle; 1 with the circles found.
"""
import subprocess
import sys


def call_graph(lines):
    """{object: {object it calls}} from `nm -A` lines."""
    defined, wanted = {}, {}
    for line in lines:
        head, _, rest = line.rpartition(":")
        obj = head.rsplit(":", 1)[-1]
        fields = rest.split()
        if len(fields) < 2:
            continue
        kind, name = fields[-2], fields[-1]
        if kind in "TDBR":
            defined[name] = obj
        elif kind == "U":
            wanted.setdefault(obj, set()).add(name)
    graph = {obj: set() for obj in set(defined.values()) | set(wanted)}
    for obj, names in wanted.items():
        for name in names:
            callee = defined.get(name)
            if callee and callee != obj:
                graph[obj].add(callee)
    return graph


def circles(graph):
    """Every call circle, each once, as a list of objects."""
    found, seen = [], set()

    def walk(start, node, path):
        for nxt in sorted(graph[node]):
            if nxt == start:
                key = frozenset(path)
                if key not in seen:
                    seen.add(key)
                    found.append(path + [start])
            elif nxt not in path and nxt > start:
                walk(start, nxt, path + [nxt])

    for start in sorted(graph):
        walk(start, start, [start])
    return found


def self_check():
    table = ["lib.a:a.c.o: 0000 T f", "lib.a:a.c.o:          U g",
             "lib.a:b.c.o: 0000 T g", "lib.a:b.c.o:          U h",
             "lib.a:c.c.o: 0000 T h", "lib.a:c.c.o:          U f",
             "lib.a:d.c.o: 0000 T k", "lib.a:d.c.o:          U f"]
    got = circles(call_graph(table))
    if got != [["a.c.o", "b.c.o", "c.c.o", "a.c.o"]]:
        sys.exit("call-circles: the self-check did not find its circle: %r" % got)
    if circles(call_graph(table[:5] + table[6:])):
        sys.exit("call-circles: the self-check found a circle where there is none")


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: call-circles.py NM ARCHIVE")
    self_check()
    out = subprocess.run([sys.argv[1], "-A", sys.argv[2]], check=True, capture_output=True, text=True).stdout
    found = circles(call_graph(out.splitlines()))
    for c in found:
        print("call circle: " + " -> ".join(o.removesuffix(".o") for o in c))
    if found:
        return 1
    print("no call circle among the files of %s" % sys.argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main())
