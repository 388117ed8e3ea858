"""ortcustom's modules import one way, in layers (ARCHITECTURE.md): element types and attribute kinds,
declarations, what is derived from them, the runtime glue's front end, then what runs ops. No import
cycle; no module imports a higher layer at import time; the few calls up, made when a function runs,
are listed here with why; every module imports first in a fresh process; importing declares nothing
to onnx (no global side effect)."""
import ast
import pathlib
import re
import subprocess
import sys

import pytest

SRC = pathlib.Path(__file__).parent.parent / "src" / "ortcustom"

LAYERS = [
    {"types", "strings", "_ort_install", "_build", "errors", "signatures"},
    {"registry"},
    {"ops"},  # and every ops.<op> (a new op's declaration needs no line here)
    {"inference", "reference", "schemas", "attr_check", "scaffold", "op_table"},
    {"_customop", "native"},
    {"session", "kernels", "testing", "library_source", "kernel_header"},  # library_source: generates, and checks a built library
    {"torch_ops"},
    {"export.mapping", "export.symbolics", "export.translation", "export"},
    {"", "__main__"},  # "": the package (ortcustom/__init__.py), the public face
]
class _Layers(dict):
    def __missing__(self, m):  # ops.<op>: the declarations' layer
        if m.startswith("ops."):
            return self["ops"]
        raise KeyError(m)

    def __contains__(self, m):
        return dict.__contains__(self, m) or m.startswith("ops.")


LAYER = _Layers({m: n for n, group in enumerate(LAYERS) for m in group})

# Calls up, made when the function runs (never at import): the declarations' convenience methods
# reach the runtime, and the Python module finds a domain's kernels when it registers it.
UPWARD_CALLS = {
    ("registry", "native"): "Op.kernel: the kernel is found and checked on first use",
    ("registry", "session"): "Domain.register(so): ortcustom.register(so, domain)",
    ("_customop", "native"): "domain_def: binds each op's kernel when its domain is registered",
    ("ops.contrib", "native"): "get_library_path(): where the contrib plain library is",
}


def _module(path: pathlib.Path) -> str:
    if path.suffix in (".pyx", ".pxi"):
        return "_customop"
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports():
    """(importer, imported, at import time?) for every `from .x import` in ortcustom's sources."""
    out = []
    for path in sorted(SRC.rglob("*")):
        if path.suffix not in (".py", ".pyx", ".pxi") or "template" in path.parts or path.name.endswith(".in"):
            continue
        me = _module(path)
        package = me if path.name == "__init__.py" else me.rpartition(".")[0]
        text = path.read_text()
        if path.suffix == ".py":
            tree = ast.parse(text)
            top = {id(n) for n in tree.body} | {id(c) for n in tree.body if isinstance(n, ast.Try)
                                                for c in n.body + [x for h in n.handlers for x in h.body]}
            found = [(n.level, n.module, [a.name for a in n.names], id(n) in top)
                     for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level]
        else:
            found = [(len(m.group(2)), m.group(3), [x.strip().split(" ")[0] for x in m.group(4).split(",")],
                      not m.group(1))
                     for m in re.finditer(r"^( *)from (\.+)([\w.]*) import ([\w, ]+)", text, re.M)]
        for level, module, names, at_import in found:
            base = package.split(".") if package else []
            base = base[:len(base) - (level - 1)] if level > 1 else base
            targets = [".".join(base + [module])] if module else [".".join(base + [n]) for n in names]
            for t in targets:
                t = t if t in LAYER else t.rpartition(".")[0] if t.rpartition(".")[0] in LAYER else t
                if t in LAYER and t not in (me, ""):  # (the package itself always imports first)
                    out.append((me, t, at_import))
    return out


def test_every_module_has_a_layer():
    missing = sorted({m for m, _, _ in _imports() if m not in LAYER})
    assert not missing, f"modules with no layer: {missing}"


def test_imports_at_import_time_point_down_and_form_no_cycle():
    up = [(a, b) for a, b, at_import in _imports() if at_import and LAYER[b] > LAYER[a]]
    assert not up, f"modules importing a higher layer at import time: {up}"
    graph = {}
    for a, b, at_import in _imports():
        if at_import:
            graph.setdefault(a, set()).add(b)

    def reach(start):
        seen, todo = set(), [start]
        while todo:
            for t in graph.get(todo.pop(), ()):
                if t not in seen:
                    seen.add(t)
                    todo.append(t)
        return seen

    cycles = sorted(m for m in graph if m in reach(m))
    assert not cycles, f"modules in an import cycle: {cycles}"


def test_calls_up_are_only_the_listed_ones():
    up = {(a, b) for a, b, _ in _imports() if LAYER[b] > LAYER[a]}
    assert up <= set(UPWARD_CALLS), f"unlisted calls up (list them with why, or move the code): {up - set(UPWARD_CALLS)}"
    assert ("registry", "schemas") not in up  # declaring an op registers nothing with onnx


MODULES = sorted(m for m in LAYER if m and m != "__main__")


def test_each_module_imports_first_in_a_fresh_process():
    code = ("import importlib, sys\nm = importlib.import_module(sys.argv[1])\n"
            "import onnx.defs\nassert not onnx.defs.has('GroupNorm', 'ortcustom'), 'importing registered a schema'")
    procs = {m: subprocess.Popen([sys.executable, "-c", code, "ortcustom." + m], stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True) for m in MODULES + ["ops"]}
    failed = {m: p.communicate(timeout=300)[0][-800:] for m, p in procs.items()}
    failed = {m: out for m, out in failed.items() if procs[m].returncode != 0}
    assert not failed, failed


def test_declaring_ops_in_a_domain_registers_no_onnx_schema():
    code = ("import onnx.defs, ortcustom, ortcustom.schemas\nfrom ortcustom.ops import GroupNorm\n"
            "d = ortcustom.Domain('x.side').add(GroupNorm)\nassert not onnx.defs.has('GroupNorm', 'x.side')\n"
            "ortcustom.schemas.register(d)\nassert onnx.defs.has('GroupNorm', 'x.side')\nprint('ok')")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.stdout.strip() == "ok", r.stderr[-2000:]
