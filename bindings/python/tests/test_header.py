# SPDX-License-Identifier: MIT
"""The binding's declarations (sdlive/_lib.py) agree with include/sdlive.h.

An ABI-mode binding reads no header: a prototype or constant copied by hand
that drifts from the library would pass wrong arguments at run time. These
tests parse both with pycparser (cffi's own parser) and compare them, so a
change to sdlive.h that the binding does not follow fails here.
"""

import importlib.util
import pathlib
import re

import pytest
from pycparser import c_ast, c_generator, c_parser

ROOT = pathlib.Path(__file__).resolve().parents[3]
HEADER = ROOT / "include" / "sdlive.h"
SYMBOLS = ROOT / "src" / "libsdlive.sym"
LIB_PY = pathlib.Path(__file__).resolve().parents[1] / "sdlive" / "_lib.py"

# The standard types the declarations use, as pycparser needs them named.
PRELUDE = "".join("typedef int %s;\n" % t for t in (
    "size_t", "pid_t", "uint32_t", "uint64_t"))


def binding_module():
    """sdlive/_lib.py alone: its declarations, without loading the library."""
    spec = importlib.util.spec_from_file_location("sdlive_lib_declarations", LIB_PY)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def header_declarations():
    """sdlive.h without comments, preprocessor lines, attributes and the
    extern "C" wrapper: the C declarations pycparser can read."""
    text = HEADER.read_text()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r"(?m)^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", " ", text)
    text = re.sub(r"__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)", " ", text)
    text = re.sub(r'extern\s+"C"\s*\{', " ", text)
    text = re.sub(r"(?m)^\}[ \t]*$", " ", text)  # the extern "C" block's end
    return text


def parse(text):
    return c_parser.CParser().parse(PRELUDE + text)


def declarations(ast):
    """{name: C text} of every function prototype and named struct in ast,
    parameter names left out."""
    gen = c_generator.CGenerator()
    found = {}
    for node in ast.ext:
        if isinstance(node, c_ast.Decl) and isinstance(node.type, c_ast.FuncDecl):
            params = node.type.args.params if node.type.args else []
            for p in params:
                if isinstance(p, c_ast.Decl):
                    p.name = None
                    strip_name(p.type)
            found[node.name] = gen.visit(node.type)
        elif isinstance(node, c_ast.Typedef) and isinstance(node.type.type, c_ast.Struct):
            struct = node.type.type
            if struct.decls:
                found["struct " + struct.name] = gen.visit(struct)
    return found


def strip_name(t):
    while t is not None and not isinstance(t, c_ast.TypeDecl):
        t = getattr(t, "type", None)
    if t is not None:
        t.declname = None


# Types the binding must spell otherwise: cffi's ABI mode has no pid_t,
# which is int on every Linux ABI.
ABI_SPELLINGS = {"pid_t": "int"}


def abi_spelled(text):
    for header_type, binding_type in ABI_SPELLINGS.items():
        text = re.sub(r"\b%s\b" % header_type, binding_type, text)
    return text


@pytest.fixture(scope="module")
def both():
    header = {name: abi_spelled(decl) for name, decl in declarations(parse(header_declarations())).items()}
    binding = declarations(parse(binding_module().CDEF))
    return header, binding


def test_every_binding_prototype_is_the_headers(both):
    header, binding = both
    functions = [n for n in binding if not n.startswith("struct ")]
    assert len(functions) >= 40, functions
    for name in functions:
        assert name in header, "%s is declared by the binding but not by sdlive.h" % name
        assert binding[name] == header[name], name


def test_every_struct_the_binding_declares_is_the_headers(both):
    header, binding = both
    structs = [n for n in binding if n.startswith("struct ")]
    assert "struct sdlive_options" in structs
    for name in structs:
        assert binding[name] == header[name], name


def test_every_exported_function_is_bound(both):
    _, binding = both
    exported = set(re.findall(r"\b(sdlive_\w+)\s*;", SYMBOLS.read_text()))
    assert len(exported) >= 40
    assert sorted(exported - set(binding)) == []


def header_constant(name):
    """The value of SDLIVE_<name> in sdlive.h: a #define or an enum member,
    of literals and constants defined before it."""
    text = HEADER.read_text()
    m = (re.search(r"(?m)^#define SDLIVE_%s\s+(.+)$" % name, text)
         or re.search(r"\bSDLIVE_%s\s*=\s*([^,\n]+)," % name, text))
    assert m, "sdlive.h defines no SDLIVE_%s" % name
    expr = re.sub(r"UINT64_C\(([^)]*)\)", r"\1", m.group(1))
    expr = re.sub(r"\b(\d+)u\b", r"\1", expr)
    expr = re.sub(r"\bSDLIVE_(\w+)", lambda n: str(header_constant(n.group(1))), expr)
    assert re.fullmatch(r"[0-9 ()*<+]+", expr), expr
    return eval(expr)  # literals, shifts and products only (checked above)


@pytest.mark.parametrize("name", [
    "HANDLE_SIGNALS", "UNSET_WATCHDOG_ENV", "TRIGGER_ON_STALL", "FDSTORE_NO_POLL",
    "PET_INTERVAL_MIN_USEC", "NOTIFY_FDS_MAX", "FDNAME_MAX", "PROGRESS_MAX", "PROGRESS_NAME_MAX"])
def test_every_binding_constant_is_the_headers(name):
    assert getattr(binding_module(), name) == header_constant(name)
