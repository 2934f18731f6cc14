#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""examples/README.md's reading order stays true: every file a pattern row
links exists and shows its pattern in at most 300 lines (a reader finds it
whole in one short file), and the row's "lines" column gives each linked
file's length, in the order of the links ("a, b, ..." for one file per event
loop).

Usage: examples-readme.py TOP
"""
import os
import re
import sys

MAX_LINES = 300


def main():
    top = sys.argv[1]
    examples = os.path.join(top, "examples")
    with open(os.path.join(examples, "README.md"), encoding="utf-8") as f:
        rows = [line for line in f if re.match(r"\|\s*\d+\s*\|", line)]
    problems = []
    for row in rows:
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        number, links, lines = cells[0], re.findall(r"\]\(([^)]+)\)", cells[2]), cells[-1]
        counts = []
        for link in links:
            # Links are relative to the README, as a Markdown viewer reads them.
            path = os.path.normpath(os.path.join(examples, link))
            if not os.path.isfile(path):
                problems.append(f"pattern {number}: {link} is not a file under examples/")
                continue
            with open(path, encoding="utf-8") as f:
                counts.append(sum(1 for _ in f))
            if counts[-1] > MAX_LINES:
                problems.append(f"pattern {number}: {link} has {counts[-1]} lines, more than {MAX_LINES}")
        stated = [int(n) for n in re.findall(r"\d+", lines)]
        if not links:
            problems.append(f"pattern {number}: links no file")
        elif stated != counts:
            problems.append(f"pattern {number}: lines column says {stated}, the files have {counts}")
    for p in problems:
        print(p)
    print(f"examples/README.md: {len(rows)} patterns, {len(problems)} problems")
    return 1 if problems or len(rows) < 7 else 0


if __name__ == "__main__":
    sys.exit(main())
