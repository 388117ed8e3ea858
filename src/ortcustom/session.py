"""Putting domains into onnxruntime.SessionOptions, and the plain libraries that need no Python.

In Python, ONNX Runtime opens our extension module by path (`register_custom_ops_library`) and
calls its exported `RegisterCustomOps`; the domains to add are handed over through
`_customop.registering`. Everywhere else (C/C++, C#, Java, Triton, a Python without ortcustom) ORT
loads a package's plain library by path: `get_library_path()`.
"""
from __future__ import annotations

import re

from .registry import Domain

MIN_ORT_VERSION = "1.17"


def get_library_path(domain: Domain | None = None) -> str:
    """The plain custom-op library (no Python inside) for `SessionOptions.register_custom_ops_library`,
    ORT's C/C++ `RegisterCustomOpsLibrary_V2`, C#, Java or Triton's `op_library_filename`.

    No domain: ortcustom's own, which registers `com.microsoft::Inverse` and the `ortcustom` domain;
    `ortcustom.ops.contrib.get_library_path()` serves the same plus ORT's contrib GroupNorm and
    SkipGroupNorm in com.microsoft, for CPU hosts. A domain: the library of the package that built
    its ops' kernels (or, where they come from several, the one of those that registers them all),
    which registers that package's domain as declared."""
    from . import native

    if domain is None:
        return native.builtin_library_path()
    if not isinstance(domain, Domain):
        raise TypeError(f"get_library_path takes an ortcustom.Domain (or nothing), got {domain!r}")
    python = [op.name for op in domain.ops if op.native is None]
    if python:
        raise ValueError(f"domain {domain.name!r} has Python kernels ({', '.join(python)}): only ops with native "
                         f"kernels go into a plain library")
    libs: dict[str, list[str]] = {}
    for op in domain.ops:
        libs.setdefault(op.kernel.library, []).append(op.name)
    if len(libs) == 1:
        (path,) = libs
        native.check_library(path, domain)
        return path
    for path in sorted(libs):  # one of them may serve them all (the contrib library serves Inverse too)
        try:
            native.check_library(path, domain)
        except ValueError:
            continue
        return path
    which = "; ".join(f"{', '.join(ops)} from {lib}" for lib, ops in sorted(libs.items()))
    raise ValueError(f"domain {domain.name!r} has kernels from {len(libs)} libraries ({which}), none of which "
                     f"registers all of them: a plain library registers the ops of one package")


def ort_version(version: str | None = None) -> tuple[int, int]:
    """(major, minor) of the installed onnxruntime (or of a version string such as "1.31.1")."""
    if version is None:
        import onnxruntime

        version = onnxruntime.__version__
    major, minor = version.split(".")[:2]
    return int(major), int(re.match(r"\d+", minor).group())


def _check_ort_version(ort) -> None:
    have = ort_version(ort.__version__)
    need = ort_version(MIN_ORT_VERSION)
    if have < need:
        raise RuntimeError(
            f"ortcustom needs onnxruntime >= {MIN_ORT_VERSION} (custom-op API version "
            f"{MIN_ORT_VERSION.split('.')[1]}); the installed onnxruntime is {ort.__version__}")


def register(so, *domains: Domain):
    """Adds `domains` to the onnxruntime.SessionOptions `so` (none: `so` as it is); returns `so`.

    ValueError for what ORT cannot be given (the glue's words, as a plain library's
    RegisterCustomOps): several versions of one op, or an op with `until` in a domain not narrowed
    to the models' opset with `domain.at(opset)`. A domain name that another registration (a plain
    library, another Domain) already put into `so` fails here too, naming both; the same domain
    again is a no-op."""
    import onnxruntime as ort

    if not isinstance(so, ort.SessionOptions):
        raise TypeError(f"expected an onnxruntime.SessionOptions, got {type(so).__name__}")
    for d in domains:
        if not isinstance(d, Domain):
            raise TypeError(f"expected ortcustom.Domain objects, got {d!r}")
        if not d.ops:
            raise ValueError(f"domain {d.name!r} has no ops")
    names = [d.name for d in domains]
    if len(set(names)) != len(names):
        raise ValueError(f"domains must have distinct names, got {names}")
    if not domains:
        return so
    _check_ort_version(ort)
    from . import _customop

    with _customop.registering(domains):  # what RegisterCustomOps, called in there, adds
        so.register_custom_ops_library(_customop.__file__)
    return so


def session_options(*domains: Domain):
    """A new onnxruntime.SessionOptions with `domains` registered."""
    import onnxruntime as ort

    return register(ort.SessionOptions(), *domains)
