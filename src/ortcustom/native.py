"""Finding native kernels (ortcustom/kernel.h) and checking them against an op's declaration.

A kernel is named `"<module>:<name>"`: `module` is an importable extension module (or a plain
shared library next to a package's modules, e.g. `mypkg/_kernels.so`) that exports
`ortcustom_kernel_<name>_cpu` and/or `ortcustom_kernel_<name>_cuda`. A bare `"<name>"` is one of
ortcustom's own (`ortcustom._kernels`). `load_kernels(path)` opens a shared library by path.
"""
from __future__ import annotations

import ctypes
import importlib
import importlib.machinery
import importlib.util
import os
import threading
from dataclasses import dataclass

BUILTIN_LIBRARY = "ortcustom._kernels"
SYMBOL_PREFIX = "ortcustom_kernel_"
_KINDS = ("int", "float", "string", "ints", "floats")


@dataclass(frozen=True)
class NativeKernel:
    """A kernel found in a library: the addresses of its oc_kernel per device (0: none), and what
    its CPU (or else CUDA) oc_kernel says of itself."""

    name: str
    library: str
    cpu: int
    cuda: int
    info: dict

    def __repr__(self):
        devices = [d for d in ("cpu", "cuda") if getattr(self, d)]
        return f"NativeKernel({self.name!r} in {self.library}, devices={devices})"


class KernelLibrary:
    """A shared library of kernels: `lib["my_add"]` is its NativeKernel `my_add`."""

    def __init__(self, path: str, handle: ctypes.CDLL):
        self.path = path
        self._handle = handle
        self._found: dict[str, NativeKernel] = {}

    def __getitem__(self, name: str) -> NativeKernel:
        got = self._found.get(name)
        if got is None:
            got = self._found[name] = _find(self, name)
        return got

    def __repr__(self):
        return f"KernelLibrary({self.path!r})"


_lock = threading.Lock()
_libraries: dict[str, KernelLibrary] = {}  # path -> library, kept for the process's life


def load_kernels(path) -> KernelLibrary:
    """Opens the shared library at `path` (once per process) for its ortcustom kernels."""
    path = os.path.realpath(os.fspath(path))
    with _lock:
        lib = _libraries.get(path)
        if lib is None:
            if not os.path.exists(path):
                raise FileNotFoundError(f"no kernel library at {path}")
            try:
                handle = ctypes.CDLL(path)
            except OSError as e:
                raise OSError(f"cannot load the kernel library {path}: {e}") from None
            lib = _libraries[path] = KernelLibrary(path, handle)
    return lib


def _module_path(module: str) -> str:
    """The file of an importable extension module, or of a shared library `pkg/name.so` (any of
    the platform's extension suffixes) beside a package's modules."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError) as e:
        spec, err = None, e
    else:
        err = None
    if spec is not None and spec.origin and os.path.exists(spec.origin):
        if not spec.origin.endswith(".py"):
            try:
                importlib.import_module(module)  # the loaded module is the library ctypes then opens
            except ImportError:
                # a plain shared library named like an extension module (pkg/_kernels.so, no PyInit_)
                if hasattr(ctypes.CDLL(spec.origin), "PyInit_" + module.rpartition(".")[2]):
                    raise
            return spec.origin
        raise ValueError(f"{module} is a Python module, not a compiled kernel library")
    parent, _, leaf = module.rpartition(".")
    if parent:
        pkg = importlib.util.find_spec(parent)
        for d in (pkg.submodule_search_locations or []) if pkg else []:
            for suffix in importlib.machinery.EXTENSION_SUFFIXES + [".so", ".dylib", ".dll"]:
                if os.path.exists(os.path.join(d, leaf + suffix)):
                    return os.path.join(d, leaf + suffix)
    why = f" ({err})" if err else ""
    raise ModuleNotFoundError(f"no kernel library {module!r}: not an importable module{why}, nor a shared "
                              f"library in its package")


def library(module: str) -> KernelLibrary:
    return load_kernels(_module_path(module))


def resolve(spec) -> NativeKernel:
    """The NativeKernel that `Op(native=spec)` names: "name" (ortcustom's), "module:name", or a
    NativeKernel (e.g. `load_kernels(path)["name"]`)."""
    if isinstance(spec, NativeKernel):
        return spec
    if not isinstance(spec, str) or not spec:
        raise TypeError(f"native= takes a kernel name ('name' or 'module:name') or a NativeKernel from "
                        f"ortcustom.load_kernels(path)[name], got {spec!r}")
    module, sep, name = spec.rpartition(":")
    return library(module if sep else BUILTIN_LIBRARY)[name]


def _find(lib: KernelLibrary, name: str) -> NativeKernel:
    from . import _customop

    if not name.isidentifier():
        raise ValueError(f"a kernel name is an identifier, got {name!r}")
    addrs, infos = {}, {}
    for device in ("cpu", "cuda"):
        symbol = f"{SYMBOL_PREFIX}{name}_{device}"
        try:
            fn = getattr(lib._handle, symbol)
        except AttributeError:
            addrs[device] = 0
            continue
        fn.restype, fn.argtypes = ctypes.c_void_p, []
        addr = fn() or 0
        if not addr:
            raise ValueError(f"{symbol} in {lib.path} returned NULL")
        info = _customop.kernel_info(addr)
        if info["abi_version"] != _customop.ABI_VERSION:
            older = "an older" if info["abi_version"] < _customop.ABI_VERSION else "a newer"
            raise ImportError(
                f"kernel {name!r} in {lib.path} was built against ortcustom kernel ABI version "
                f"{info['abi_version']}, {older} one than this ortcustom's ({_customop.ABI_VERSION}): rebuild "
                f"it against this ortcustom (pip install --no-build-isolation . in its package)")
        if info["device"] != device:
            raise ValueError(f"{symbol} in {lib.path} returns a kernel for device {info['device']}")
        if not info["has_compute"]:
            raise ValueError(f"{symbol} in {lib.path} has no compute function")
        addrs[device], infos[device] = addr, info
    if not any(addrs.values()):
        raise LookupError(f"no native kernel {name!r} in {lib.path} (no symbol {SYMBOL_PREFIX}{name}_cpu "
                          f"or {SYMBOL_PREFIX}{name}_cuda)")
    if addrs["cpu"] and addrs["cuda"]:
        a, b = infos["cpu"], infos["cuda"]
        for field in ("inputs", "outputs", "attrs"):
            if a[field] != b[field]:
                raise ValueError(f"kernel {name!r} in {lib.path}: its CPU and CUDA entries declare different "
                                 f"{field}: {a[field]} and {b[field]}")
    return NativeKernel(name, lib.path, addrs["cpu"], addrs["cuda"], infos.get("cpu") or infos["cuda"])


def check(op, k: NativeKernel) -> None:
    """Raises ValueError, naming the op and the kernel, where kernel and declaration disagree."""
    from .types import name_of_enum

    info = k.info
    where = f"op {op.name!r}: native kernel {k.name!r} ({k.library})"
    want_in, want_out = [i.name for i in op.inputs], [o.name for o in op.outputs]
    if info["inputs"] != want_in:
        raise ValueError(f"{where} takes inputs {info['inputs']}; the op declares {want_in}")
    if info["outputs"] != want_out:
        raise ValueError(f"{where} has outputs {info['outputs']}; the op declares {want_out}")
    have = dict(info["attrs"])
    if len(have) != len(info["attrs"]):
        raise ValueError(f"{where} names an attribute twice: {info['attrs']}")
    want = {a.name: a.kind for a in op.attrs}
    for n, kind in have.items():
        if n not in want:
            raise ValueError(f"{where} reads attribute {n!r} ({kind}), which the op does not declare")
        if want[n] != kind:
            raise ValueError(f"{where} reads attribute {n!r} as {kind}; the op declares it {want[n]}")
    missing = sorted(set(want) - set(have))
    if missing:
        raise ValueError(f"{where} does not read the declared attributes {missing}: declare in the kernel "
                         f"every attribute the op has")
    first = op.inputs[0].type if op.inputs else None
    if first is not None and info["dtypes"]:
        declared = op.types.get(first, (first,))
        taken = {name_of_enum(t) for t in info["dtypes"]}
        extra = [t for t in declared if t not in taken]
        if extra:
            raise ValueError(f"{where} takes {sorted(taken)} for input {op.inputs[0].name!r}; the op declares "
                             f"{list(declared)}: no kernel for {extra}")
