"""`python -m ortcustom new NAME`: a meson-python package of your own native ops, ready to build.

The template (ortcustom/template/) is itself a working package named `myops`, with one op
(ScaledAdd: C++ and CUDA kernels, its declaration, tests, a benchmark); `new` copies it with
every `myops` renamed to NAME.
"""
from __future__ import annotations

import importlib.util
import keyword
import os
import re

TEMPLATE = os.path.join(os.path.dirname(__file__), "template")
TOKEN = "myops"
_SKIP = {"__pycache__", "build", ".pytest_cache"}


def _check_name(name: str) -> None:
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name) or keyword.iskeyword(name):
        raise ValueError(f"a package name is a lowercase Python identifier (letters, digits, _), got {name!r}")
    if importlib.util.find_spec(name) is not None:
        raise ValueError(f"{name!r} is already an importable module here; pick a name that shadows nothing")


def files(name: str) -> dict[str, str]:
    """The new package's files: relative path -> text."""
    out = {}
    for root, dirs, names in os.walk(TEMPLATE):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP)
        for n in sorted(names):
            if n.endswith(".pyc"):
                continue
            path = os.path.join(root, n)
            rel = os.path.relpath(path, TEMPLATE).replace(TOKEN, name)
            with open(path, encoding="utf-8") as f:
                out[rel] = f.read().replace(TOKEN, name)
    return out


def new(name: str, directory: str = ".") -> str:
    """Writes the package NAME into directory/NAME; returns that path."""
    _check_name(name)
    dest = os.path.join(directory, name)
    if os.path.exists(dest):
        raise FileExistsError(f"{dest} already exists; pick another name or --dir")
    for rel, text in files(name).items():
        path = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    return dest


def build_steps(dest: str) -> list[str]:
    """The commands that build and test the package at `dest`: its README's first ```bash block."""
    with open(os.path.join(dest, "README.md"), encoding="utf-8") as f:
        m = re.search(r"^```bash\n(.*?)^```$", f.read(), re.S | re.M)
    return m.group(1).splitlines() if m else []
