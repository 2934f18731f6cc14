# SPDX-License-Identifier: MIT
"""The Python blocks of docs/python.md compile, and the page names every
public name of the package."""

import os
import re

import pytest

import sdlive

PAGE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "docs", "python.md")


def blocks():
    text = open(PAGE, encoding="utf-8").read()
    return re.findall(r"^```python\n(.*?)^```$", text, re.S | re.M)


def test_page_has_python_blocks():
    assert len(blocks()) >= 4


@pytest.mark.parametrize("index", range(4))
def test_block_compiles(index):
    code = blocks()[index]
    compile(code, "docs/python.md block %d" % index, "exec")


def test_page_names_every_public_method():
    text = open(PAGE, encoding="utf-8").read()
    public = [n for n in dir(sdlive.Supervisor) if not n.startswith("_")]
    missing = [n for n in public if n not in ("close", "handle", "owned", "current")
               and "`%s" % n not in text and " %s" % n not in text and n + "(" not in text]
    assert missing == []
