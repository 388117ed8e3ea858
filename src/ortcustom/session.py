"""Putting domains into onnxruntime.SessionOptions.

ONNX Runtime opens our extension module by path (`register_custom_ops_library`) and calls its
exported `RegisterCustomOps`; the domains to add are handed over through `_customop.registering`.
"""
from __future__ import annotations

from . import _customop
from .registry import Domain

MIN_ORT_VERSION = "1.17"


def get_library_path() -> str:
    """The path to give `SessionOptions.register_custom_ops_library` (our extension module). Given
    directly, it registers the built-in ops in the domain `ortcustom`."""
    return _customop.__file__


def _check_ort_version(ort) -> None:
    have = tuple(int(p) for p in ort.__version__.split(".")[:2])
    need = tuple(int(p) for p in MIN_ORT_VERSION.split("."))
    if have < need:
        raise RuntimeError(
            f"ortcustom needs onnxruntime >= {MIN_ORT_VERSION} (custom-op API version "
            f"{_customop.ORT_API_VERSION}); the installed onnxruntime is {ort.__version__}")


def register(so, *domains: Domain):
    """Adds `domains` to the onnxruntime.SessionOptions `so` (none: `so` as it is); returns `so`."""
    import onnxruntime as ort

    if not isinstance(so, ort.SessionOptions):
        raise TypeError(f"expected an onnxruntime.SessionOptions, got {type(so).__name__}")
    for d in domains:
        if not isinstance(d, Domain):
            raise TypeError(f"expected ortcustom.Domain objects, got {d!r}")
        if not d.ops:
            raise ValueError(f"domain {d.name!r} has no ops")
        names = [op.name for op in d.ops]
        for name in sorted({n for n in names if names.count(n) > 1}):
            spans = ", ".join(f"[{op.since}, {op.until or 'inf'}]" for op in d.ops if op.name == name)
            # ORT makes one schema per custom op name and domain, from the first op registered
            raise ValueError(
                f"domain {d.name!r} declares op {name!r} for versions {spans}; ONNX Runtime takes one "
                f"version of a custom op per domain: register domain.at(<the model's opset for {d.name!r}>)")
    names = [d.name for d in domains]
    if len(set(names)) != len(names):
        raise ValueError(f"domains must have distinct names, got {names}")
    if not domains:
        return so
    _check_ort_version(ort)
    with _customop.registering(domains):  # what RegisterCustomOps, called in there, adds
        so.register_custom_ops_library(get_library_path())
    return so


def session_options(*domains: Domain):
    """A new onnxruntime.SessionOptions with `domains` registered."""
    import onnxruntime as ort

    return register(ort.SessionOptions(), *domains)
