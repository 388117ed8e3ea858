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
import weakref

from .registry import NativeKernel

BUILTIN_LIBRARY = "ortcustom._kernels"  # a plain library: ortcustom/_kernels.so
SYMBOL_PREFIX = "ortcustom_kernel_"


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
    return NativeKernel(name, lib.path, addrs["cpu"], addrs["cuda"], infos.get("cpu") or infos["cuda"])


# Declarations are pure data: an op's kernel is found (its library loaded) and checked against the
# declaration when it is first used (a session, a direct call, a torch op), once per op.
_bound: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def bind(op) -> NativeKernel | None:
    """The op's native kernel, found and checked (None for a Python op); ValueError (naming op and
    kernel) where they disagree, ImportError/LookupError where it cannot be found."""
    return _bound_def(op)[0]


def op_def(op):
    """The glue's oc_op_def of `op` (ortcustom._customop.OpDef), with its kernel bound."""
    return _bound_def(op)[1]


def _bound_def(op):
    got = _bound.get(op)
    if got is not None:
        return got
    from . import _customop

    kernel = None
    if op.native is not None:
        try:
            kernel = resolve(op.native)
        except (LookupError, ImportError, OSError, TypeError) as e:
            raise ValueError(f"op {op.name!r}: {e}") from None
    d = _customop.OpDef(op, kernel)
    if kernel is not None:
        for addr in (kernel.cpu, kernel.cuda):
            why = _customop.check_kernel(d, addr) if addr else None
            if why:
                raise ValueError(f"op {op.name!r}: {why} ({kernel.library})")
    with _lock:
        got = _bound.setdefault(op, (kernel, d))
    return got


def library_file(module: str) -> str:
    """The file of one of ortcustom's plain libraries ("ortcustom._kernels"): beside the package's
    modules, or in the build directory of an editable install (whose import hook knows where)."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.origin:
        raise ModuleNotFoundError(f"no {module} library: this ortcustom was not built whole (reinstall it)")
    return spec.origin


def builtin_library_path() -> str:
    """ortcustom's own plain library (kernels, glue, table of the built-in ops)."""
    return library_file(BUILTIN_LIBRARY)


def builtin_info(what: str):
    """ortcustom_info_<what>() of the built-in library: cpu_isa (str), cuda_built, cuda_device_count,
    cache_keeps_bytes."""
    fn = getattr(load_kernels(builtin_library_path())._handle, "ortcustom_info_" + what)
    if what == "cpu_isa":
        fn.restype = ctypes.c_char_p
        return fn().decode()
    fn.restype = ctypes.c_longlong if what == "cache_keeps_bytes" else ctypes.c_int
    return fn()


def check_library(path: str, domain) -> None:
    """Raises ValueError when the library at `path` is not a plain custom-op library (built by
    ortcustom's library-source step) that can register `domain`."""
    lib = load_kernels(path)
    if not hasattr(lib._handle, "RegisterCustomOps") or not hasattr(lib._handle, "ortcustom_info_registers"):
        raise ValueError(f"{path} has no RegisterCustomOps: it was not built as a plain custom-op library "
                         f"(rebuild the package against this ortcustom; see README, Deploy without Python)")
    fn = lib._handle.ortcustom_info_registers
    fn.restype = ctypes.c_char_p
    registers = {}
    for item in filter(None, fn().decode().split(";")):
        name, _, ops = item.partition(":")
        registers.setdefault(name, set()).update(ops.split(","))
    missing = sorted({op.name for op in domain.ops} - registers.get(domain.name, set()))
    if missing:
        have = "; ".join(f"{d}: {', '.join(sorted(o))}" for d, o in registers.items())
        raise ValueError(f"{path} does not register {domain.name}::{', '.join(missing)} (it registers {have}): "
                         f"give ONNX Runtime the library built for that domain")
