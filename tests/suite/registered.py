#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The tests a build registers are the ones tests/suite/registered.txt names.

A test that drops out of the suite fails nobody: a folder that looks for a
target before the folder defining it was added, a dependency that was not
found, a guard written the wrong way round. ctest then runs fewer tests and
reports them all passed. This check makes the suite's membership a fact in
the tree: every test the list names is registered, every registered test is
listed, and the list marks exactly the tests labelled "platform" (the
cluster platform's, which a build without it leaves out).

  registered.py CTEST BUILD LIST                      the full build
  registered.py CTEST BUILD LIST --without-platform   SDLIVE_BUILD_CLUSTER=OFF
  registered.py CTEST BUILD LIST --write              rewrite LIST from BUILD

LIST has one test per line, "NAME" or "NAME platform"; "#" starts a comment.
"""

import json
import subprocess
import sys
from typing import Dict, List, Set


def registered(ctest: str, build: str) -> Dict[str, Set[str]]:
    """Name -> labels of every test the build registers."""
    out = subprocess.run([ctest, "--test-dir", build, "--show-only=json-v1"],
                         check=True, capture_output=True, text=True).stdout
    tests: Dict[str, Set[str]] = {}
    for test in json.loads(out)["tests"]:
        labels: Set[str] = set()
        for prop in test.get("properties", []):
            if prop["name"] == "LABELS":
                labels = set(prop["value"])
        tests[test["name"]] = labels
    return tests


def read_list(path: str) -> Dict[str, bool]:
    """Name -> whether the list marks it as the platform's."""
    listed: Dict[str, bool] = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            words = line.split("#", 1)[0].split()
            if not words:
                continue
            if len(words) > 2 or (len(words) == 2 and words[1] != "platform"):
                sys.exit(f"{path}:{number}: expected NAME or NAME platform: {line.strip()}")
            if words[0] in listed:
                sys.exit(f"{path}:{number}: {words[0]} listed twice")
            listed[words[0]] = len(words) == 2
    return listed


def write_list(path: str, tests: Dict[str, Set[str]]) -> None:
    with open(path, encoding="utf-8") as f:
        header = [line for line in f if line.startswith("#")]
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(header)
        for name in sorted(tests):
            f.write(name + (" platform" if "platform" in tests[name] else "") + "\n")
    print(f"registered: {path}: {len(tests)} tests written")


def check(listed: Dict[str, bool], tests: Dict[str, Set[str]], with_platform: bool) -> List[str]:
    expected = {name for name, platform in listed.items() if with_platform or not platform}
    problems = [f"listed but not registered: {name}" for name in sorted(expected - tests.keys())]
    problems += [f"registered but not listed: {name}" for name in sorted(tests.keys() - listed.keys())]
    for name in sorted(tests.keys() & listed.keys()):
        if ("platform" in tests[name]) != listed[name]:
            problems.append(f"{name}: labelled platform {'platform' in tests[name]}, "
                            f"listed as the platform's {listed[name]}")
        if listed[name] and not with_platform:
            problems.append(f"{name}: the platform's test is registered without the platform")
    return problems


def main(argv: List[str]) -> int:
    if len(argv) not in (4, 5) or argv[4:] not in ([], ["--without-platform"], ["--write"]):
        print(__doc__, file=sys.stderr)
        return 2
    ctest, build, path = argv[1:4]
    tests = registered(ctest, build)
    if argv[4:] == ["--write"]:
        write_list(path, tests)
        return 0
    listed = read_list(path)
    with_platform = argv[4:] != ["--without-platform"]
    problems = check(listed, tests, with_platform)
    for problem in problems:
        print(f"FAIL: {problem}")
    if problems:
        print(f"If the change was meant, rewrite the list from a full build: "
              f"{argv[0]} {ctest} BUILD {path} --write")
        return 1
    print(f"registered: {len(tests)} tests, as {path} lists them"
          f"{'' if with_platform else ' (less the platform)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
