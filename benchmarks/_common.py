"""What the asv benchmarks and the runner (`python -m benchmarks`) share: the cases, ours and every
peer as a zero-argument callable, the goals, and the timer.

Ours is an ORT session with ortcustom's op (domain `ortcustom`), `session.run` on NumPy inputs,
THREADS intra-op threads. CPU peers: ORT's built-ins (com.microsoft Inverse in a session without
ortcustom; GroupNormalization opset 21, scale and bias of shape (C,)), onnxruntime-extensions'
ai.onnx.contrib Inverse (2-D float32 only), NumPy, torch -- every one limited to THREADS threads.
THREADS: 2, or ORTCUSTOM_BENCH_THREADS (the runner's --threads sets it).
`ours_direct` (`ortcustom.kernels.*`, on OpenMP's pool of `kernels.threads()` threads, no ORT) is an extra row, for information.

Thread limits: torch.set_num_threads(THREADS); NumPy's BLAS (and any other BLAS/OpenMP pool loaded)
via threadpoolctl.threadpool_limits(THREADS) if threadpoolctl is installed, else OPENBLAS_NUM_THREADS,
OMP_NUM_THREADS, MKL_NUM_THREADS = THREADS, set here when NumPy is not imported yet (the runner imports
this module before NumPy). `THREAD_LIMITS` says which took effect.
"""
from __future__ import annotations

import importlib.util
import math
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Callable

THREADS_ENV = "ORTCUSTOM_BENCH_THREADS"
THREADS = int(os.environ.get(THREADS_ENV) or 2)
if THREADS < 1:
    raise ValueError(f"{THREADS_ENV}={os.environ[THREADS_ENV]!r}: a thread count must be >= 1")
_ENV_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
if importlib.util.find_spec("threadpoolctl") is None:
    if "numpy" not in sys.modules:
        for _v in _ENV_VARS:
            os.environ.setdefault(_v, str(THREADS))
        THREAD_LIMITS = "env vars " + ", ".join(f"{v}={os.environ[v]}" for v in _ENV_VARS)
    else:
        THREAD_LIMITS = "NONE for NumPy (no threadpoolctl, and NumPy was imported before the env vars could be set)"
else:
    THREAD_LIMITS = f"threadpoolctl.threadpool_limits({THREADS})"

import numpy as np  # noqa: E402

EPS = 1e-5
DTYPES = {"float32": np.float32, "float64": np.float64, "float16": np.float16}


class Unavailable(Exception):
    """This implementation cannot run this case here (the reason is the message)."""


_limited = False


def limit_threads() -> str:
    """Limits torch and the BLAS pools to THREADS threads (once); returns how NumPy's were limited."""
    global _limited
    if not _limited:
        _limited = True
        if THREAD_LIMITS.startswith("threadpoolctl"):
            import threadpoolctl

            threadpoolctl.threadpool_limits(THREADS)  # stays in force: we never restore
        try:
            import torch

            torch.set_num_threads(THREADS)
        except ImportError:
            pass
        if THREAD_LIMITS.startswith("threadpoolctl"):  # torch may have loaded its own pools
            import threadpoolctl

            threadpoolctl.threadpool_limits(THREADS)
    return THREAD_LIMITS


# ---------------------------------------------------------------------------------------------
# cases


@dataclass(frozen=True)
class Goal:
    peer: str          # an impl key, or "best" (the fastest available non-info peer)
    max_ratio: float   # met when ours / peer <= max_ratio
    text: str
    ours: str = "ours"  # which of ours: "ours" (the session through the Python module) or another impl


@dataclass(frozen=True)
class Case:
    group: str                 # inverse | group_norm | dispatch | cuda_*, or a module's (contrib_group_norm, torch_op_*)
    shape: tuple
    dtype: str = "float32"
    groups: int = 0            # group_norm
    goals: tuple = field(default=(), compare=False)

    @property
    def key(self) -> str:
        if self.group.endswith("inverse"):
            b, n = self.shape
            s = f"{b}x{n}"
        elif self.group == "dispatch":
            s = "4 floats"
        else:
            s = "x".join(map(str, self.shape)) + f" G={self.groups}"
        return f"{self.group} {s} {self.dtype}"

    @property
    def x_shape(self) -> tuple:
        if self.group.endswith("inverse"):
            b, n = self.shape
            return (n, n) if b == 1 else (b, n, n)  # batch 1 as a 2-D matrix, for every impl
        return self.shape


def _gn_groups(c: int) -> int:
    return 32 if c % 32 == 0 else 8


def _inverse_goals(b: int, n: int, dtype: str, full_bn) -> tuple:
    if dtype != "float32":
        return ()
    goals = []
    if full_bn in ((65536, 4), (4096, 16), (256, 64), (16, 256)):
        goals.append(Goal("best", 1.0, "ours / best peer <= 1.0"))
    elif full_bn in ((1, 512), (1, 1024)):
        goals.append(Goal("best", 1.5, "ours / best peer <= 1.5"))
        goals.append(Goal("torch", 1.0, "ours / torch.linalg.inv (MKL) <= 1.0"))
    if full_bn == (65536, 4):
        goals.append(Goal("ort_builtin", 1 / 1.5, ">= 1.5x faster than ORT com.microsoft Inverse"))
    return tuple(goals)


def cases(quick: bool = False, cuda: bool = False) -> list[Case]:
    """The CPU cases (and with cuda=True the GPU ones); quick: tiny sizes, same code paths, same
    goals (shown, not judged)."""
    inv_full = [(65536, 4), (4096, 16), (256, 64), (16, 256), (1, 512), (1, 1024)]
    inv_quick = [(256, 4), (64, 16), (4, 64), (2, 32), (1, 32), (1, 64)]
    inv = inv_quick if quick else inv_full
    out = [Case("inverse", bn, "float32", goals=_inverse_goals(*bn, "float32", full)) for bn, full in zip(inv, inv_full)]
    for dtype in ("float64", "float16"):
        out += [Case("inverse", bn, dtype) for bn in (inv[1], inv[2])]  # 4096x16 and 256x64
    gn_full = [(1, 32, 8, 8), (8, 64, 32, 32), (2, 320, 64, 64), (1, 512, 128, 128)]
    gn_quick = [(1, 32, 4, 4), (1, 64, 8, 8), (1, 320, 4, 4), (1, 512, 4, 4)]
    for i, shape in enumerate(gn_quick if quick else gn_full):
        goals = (Goal("ort_group_norm", 0.2, ">= 5x faster than ORT GroupNormalization"),)
        if i >= 1:
            goals = (Goal("torch", 1.0, "ours / torch <= 1.0"),) + goals
        out.append(Case("group_norm", shape, "float32", _gn_groups(shape[1]), goals))
    for module in dict.fromkeys(_GROUP_MODULES.values()):
        out += module.cases(quick)
    out.append(Case("dispatch", (2, 2), "float32", goals=(Goal("ort_identity", 1.15, "ours / Identity <= 1.15"),
                                                          Goal("ort_identity", 1.1, "library / Identity <= 1.1",
                                                               ours="ours_library"))))
    if cuda:
        cinv = [(256, 4), (64, 16), (4, 64)] if quick else [(65536, 4), (4096, 16), (256, 64)]
        out += [Case("cuda_inverse", bn, "float32", goals=(Goal("cupy", 1.0, "ours / cupy.linalg.inv <= 1.0"),))
                for bn in cinv]
        shape = (1, 64, 8, 8) if quick else (8, 512, 64, 64)
        for dtype in ("float16", "float32"):
            out.append(Case("cuda_group_norm", shape, dtype, _gn_groups(shape[1]),
                            (Goal("copy", 1 / 0.7, ">= 70% of D2D copy bandwidth (ours / copy <= 1.43)"),
                             Goal("torch_cuda", 1.0, "ours / torch CUDA <= 1.0"))))
    return out


# ---------------------------------------------------------------------------------------------
# data and references


def inverse_input(case: Case, xp=np):
    n = case.shape[1]
    rng = np.random.default_rng(0)
    x = rng.standard_normal(case.x_shape) + n * np.eye(n)  # well conditioned
    return xp.asarray(x.astype(DTYPES[case.dtype]))


def group_norm_inputs(case: Case, xp=np):
    rng = np.random.default_rng(1)
    c = case.shape[1]
    dt = DTYPES[case.dtype]
    x = (rng.standard_normal(case.shape, dtype=np.float32) * 2 + 3).astype(dt)
    s = rng.standard_normal(c).astype(dt)
    b = rng.standard_normal(c).astype(dt)
    return xp.asarray(x), xp.asarray(s), xp.asarray(b)


def reference(case: Case) -> np.ndarray:
    """float64 result of the case, on the host."""
    if case.group.endswith("inverse") or case.group == "dispatch":
        return np.linalg.inv(inverse_input(case).astype(np.float64))
    if hasattr(_GROUP_MODULES.get(case.group), "reference"):
        return _GROUP_MODULES[case.group].reference(case)
    x, s, b = (a.astype(np.float64) for a in group_norm_inputs(case))
    n, c = x.shape[:2]
    g = x.reshape(n, case.groups, -1)
    y = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + EPS)).reshape(x.shape)
    per_channel = (1, c) + (1,) * (x.ndim - 2)
    return y * s.reshape(per_channel) + b.reshape(per_channel)


def tolerance(dtype: str) -> float:
    return {"float64": 1e-8, "float32": 2e-3, "float16": 5e-2}[dtype]


def to_host(y) -> np.ndarray:
    if isinstance(y, (list, tuple)):
        y = y[0]
    if hasattr(y, "detach"):  # torch
        return y.detach().cpu().numpy()
    if hasattr(y, "get") and hasattr(y, "__cuda_array_interface__"):  # cupy
        return y.get()
    return np.asarray(y)


# ---------------------------------------------------------------------------------------------
# implementations


@dataclass
class Impl:
    key: str
    label: str
    fn: Callable[[], object]             # one run; returns the output (for the check)
    sync: Callable[[], None] | None = None   # GPU: waits for queued work
    expected: np.ndarray | None = None   # None: the case's reference
    info: bool = False                   # shown, never a "peer" for goals or "best"
    keep: tuple = ()                     # keeps sessions and buffers alive


LABELS = {
    "ours": "ours (ORT session)",
    "ours_direct": "ours direct call (info)",
    "ours_library": "ours, plain library (no Python)",
    "ort_builtin": "ORT com.microsoft Inverse",
    "ort_extensions": "ORT-extensions Inverse",
    "numpy": "numpy.linalg.inv",
    "torch": "torch (CPU)",
    "ort_group_norm": "ORT GroupNormalization-21",
    "ort_identity": "ORT Identity",
    "ours_cuda": "ours (ORT CUDA, IOBinding)",
    "ours_direct_cuda": "ours direct call on CuPy (info)",
    "cupy": "cupy.linalg.inv",
    "torch_cuda": "torch (CUDA)",
    "copy": "D2D copy (cudaMemcpyAsync)",
}

IMPLS = {
    "inverse": ("ours", "ort_builtin", "ort_extensions", "numpy", "torch", "ours_direct"),
    "group_norm": ("ours", "ort_group_norm", "torch", "ours_direct"),
    "dispatch": ("ours", "ours_library", "ort_identity"),
    "cuda_inverse": ("ours_cuda", "cupy", "torch_cuda", "ours_direct_cuda"),
    "cuda_group_norm": ("ours_cuda", "copy", "torch_cuda", "ours_direct_cuda"),
}
OURS = {"ours", "ours_cuda"}
INFO = {"ours_direct", "ours_direct_cuda", "ours_library"}  # not peers; goals may name them as `ours`


def _add_groups(module) -> None:
    """Case groups kept in a module of their own (GROUP or GROUPS, IMPLS, LABELS, and optionally
    INFO, OURS; cases and make_impl; reference, where the default below does not fit)."""
    for group in getattr(module, "GROUPS", (getattr(module, "GROUP", None),)):
        IMPLS[group] = module.IMPLS
        _GROUP_MODULES[group] = module
    LABELS.update(module.LABELS)
    INFO.update(getattr(module, "INFO", ()))
    OURS.update(getattr(module, "OURS", ()))


_GROUP_MODULES: dict = {}

_DOMAIN = None


def _domain():
    global _DOMAIN
    if _DOMAIN is None:
        import ortcustom
        from ortcustom.ops import GroupNorm, Inverse

        _DOMAIN = ortcustom.Domain("ortcustom").add(Inverse, GroupNorm)
    return _DOMAIN


def _onnx_model(op_type: str, domain: str, inputs: dict, dtype: str, opset: int = 17, attrs=None) -> bytes:
    """A one-node model; `inputs` maps names to shapes (all of `dtype`)."""
    from onnx import helper

    from ortcustom.testing import for_runtime
    from ortcustom.types import name_of_dtype, onnx_enum

    elem = onnx_enum(name_of_dtype(DTYPES[dtype]))
    graph = helper.make_graph(
        [helper.make_node(op_type, list(inputs), ["Y"], domain=domain, **(attrs or {}))], "bench",
        [helper.make_tensor_value_info(n, elem, list(s)) for n, s in inputs.items()],
        [helper.make_tensor_value_info("Y", elem, None)])
    opsets = [helper.make_opsetid("", opset)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    return for_runtime(helper.make_model(graph, opset_imports=opsets)).SerializeToString()


def _session(model: bytes, so=None, providers=("CPUExecutionProvider",)):
    import onnxruntime as ort

    so = so if so is not None else ort.SessionOptions()
    so.intra_op_num_threads = THREADS
    return ort.InferenceSession(model, so, providers=list(providers))


def _ours_session(case: Case, providers=("CPUExecutionProvider",)):
    import ortcustom
    from ortcustom.ops import GroupNorm, Inverse
    from ortcustom.testing import make_model

    dt = DTYPES[case.dtype]
    if case.group.endswith("group_norm"):
        model = make_model(GroupNorm, _domain(), {"X": (dt, case.shape), "num_groups": None,
                                                  "scale": (dt, case.shape[1:2]), "bias": (dt, case.shape[1:2])},
                           attrs={"num_groups": case.groups, "epsilon": EPS})
    else:
        model = make_model(Inverse, _domain(), {"X": (dt, case.x_shape)})
    return _session(model.SerializeToString(), ortcustom.session_options(_domain()), providers)


def _cpu_inputs(case: Case) -> dict:
    if case.group == "group_norm":
        x, s, b = group_norm_inputs(case)
        return {"X": x, "scale": s, "bias": b}
    return {"X": inverse_input(case)}


_EXT_LIB = None


def _extensions_lib() -> str:
    global _EXT_LIB
    if _EXT_LIB is None:
        try:
            from onnxruntime_extensions import get_library_path

            _EXT_LIB = get_library_path()
        except Exception as e:  # not installed / cannot load
            _EXT_LIB = f"unavailable: {e!r}"
    if _EXT_LIB.startswith("unavailable"):
        raise Unavailable(f"onnxruntime-extensions {_EXT_LIB}")
    return _EXT_LIB


_TORCH_LINALG_CHILD = """
import sys, numpy as np, torch
torch.set_num_threads(int(sys.argv[2]))
try:
    getattr(torch.linalg, sys.argv[1])(*(torch.from_numpy(np.load(p)) for p in sys.argv[3:]))
except RuntimeError as e:
    print(str(e).splitlines()[0][:90])
"""


def torch_linalg_fails(name: str, *arrays, timeout: float = 60.0) -> str:
    """Why torch.linalg.<name>(*arrays) on THREADS threads cannot be timed ('' if it runs), tried in a
    child process: torch 2.13.0's CPU wheel on 2 threads runs MKL's getrf inside its parallel loop,
    which for batches of large matrices (inv at 16x256 float32, solve at 16x256) raises an MKL SLASWP
    error on AMD and never returns on Intel Ice Lake."""
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        paths = [os.path.join(d, f"{i}.npy") for i in range(len(arrays))]
        for path, x in zip(paths, arrays):
            np.save(path, x)
        try:
            r = subprocess.run([sys.executable, "-c", _TORCH_LINALG_CHILD, name, str(THREADS), *paths],
                               capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return f"no result in {timeout:.0f} s (hangs in MKL's getrf)"
    if r.returncode != 0:
        return f"the process died ({r.returncode})"
    return r.stdout.strip()


def make_impl(case: Case, key: str) -> Impl:
    """Ours or a peer for `case`, ready to run; raises Unavailable (with the reason) if it cannot."""
    limit_threads()
    label = LABELS[key]
    if case.group.startswith("cuda"):
        return _make_cuda_impl(case, key, label)
    if case.group in _GROUP_MODULES:
        return _GROUP_MODULES[case.group].make_impl(case, key, label)
    feeds = _cpu_inputs(case)
    if key == "ours":
        sess = _ours_session(case)
        return Impl(key, label, lambda: sess.run(None, feeds), keep=(sess,))
    if key == "ours_library":  # the same op through ortcustom's plain library, as a C++ host loads it
        import onnxruntime as ort

        import ortcustom
        from ortcustom.ops import Inverse
        from ortcustom.testing import make_model

        so = ort.SessionOptions()
        so.register_custom_ops_library(ortcustom.get_library_path())
        model = make_model(Inverse, _domain(), {"X": (DTYPES[case.dtype], case.x_shape)})
        sess = _session(model.SerializeToString(), so)
        return Impl(key, label, lambda: sess.run(None, feeds), keep=(sess,))
    if key == "ours_direct":
        import ortcustom.kernels as k

        if case.group == "inverse":
            x = feeds["X"]
            out = np.empty_like(x)
            return Impl(key, label, lambda: k.inverse(x, out=out), info=True)
        x, s, b = feeds["X"], feeds["scale"], feeds["bias"]
        out = np.empty_like(x)
        return Impl(key, label, lambda: k.group_norm(x, case.groups, s, b, epsilon=EPS, out=out), info=True)
    if key == "ort_builtin":
        sess = _session(_onnx_model("Inverse", "com.microsoft", {"X": case.x_shape}, case.dtype))
        return Impl(key, label, lambda: sess.run(None, feeds), keep=(sess,))
    if key == "ort_extensions":
        if case.dtype != "float32" or len(case.x_shape) != 2:
            raise Unavailable("n/a: ai.onnx.contrib Inverse takes 2-D float32 only")
        import onnxruntime as ort

        so = ort.SessionOptions()
        so.register_custom_ops_library(_extensions_lib())
        sess = _session(_onnx_model("Inverse", "ai.onnx.contrib", {"X": case.x_shape}, case.dtype), so)
        return Impl(key, label, lambda: sess.run(None, feeds), keep=(sess,))
    if key == "numpy":
        if case.dtype == "float16":
            raise Unavailable("n/a: numpy.linalg.inv has no float16")
        x = feeds["X"]
        return Impl(key, label, lambda: np.linalg.inv(x))
    if key == "torch":
        import torch

        if case.group == "inverse":
            if case.dtype == "float16":
                raise Unavailable("n/a: torch.linalg.inv has no float16 on CPU")
            why = torch_linalg_fails("inv", feeds["X"])
            if why:
                raise Unavailable(f"torch.linalg.inv fails here: {why}")
            xt = torch.from_numpy(feeds["X"])
            return Impl(key, label, lambda: torch.linalg.inv(xt))
        xt, st, bt = (torch.from_numpy(feeds[n]) for n in ("X", "scale", "bias"))
        gn = torch.nn.functional.group_norm
        return Impl(key, label, lambda: gn(xt, case.groups, st, bt, EPS))
    if key == "ort_group_norm":
        c = case.shape[1]
        model = _onnx_model("GroupNormalization", "", {"X": case.shape, "scale": (c,), "bias": (c,)}, case.dtype,
                            opset=21, attrs={"num_groups": case.groups, "epsilon": EPS})
        sess = _session(model)
        return Impl(key, label, lambda: sess.run(None, feeds), keep=(sess,))
    if key == "ort_identity":
        x4 = feeds["X"].reshape(-1)
        sess = _session(_onnx_model("Identity", "", {"X": x4.shape}, "float32"))
        return Impl(key, label, lambda: sess.run(None, {"X": x4}), expected=x4, keep=(sess,))
    raise ValueError(f"no implementation {key!r} for {case.group}")


# ---------------------------------------------------------------------------------------------
# GPU


def cuda_unavailable_reason() -> str | None:
    """None if the GPU cases can run here, else why not."""
    try:
        import cupy as cp
    except Exception as e:
        return f"no CuPy ({type(e).__name__}: {e}; pip install cupy-cuda13x)"
    try:
        if cp.cuda.runtime.getDeviceCount() == 0:
            return "no CUDA GPU visible to CuPy"
    except Exception as e:
        return f"no usable CUDA GPU ({e})"
    import ortcustom
    from ortcustom.native import builtin_info

    if not ortcustom.build_info()["cuda"]:
        return "this ortcustom was built without CUDA (build_info()['cuda'] is False)"
    if builtin_info("cuda_device_count") == 0:
        return "ortcustom sees no CUDA device (none usable now)"
    import onnxruntime as ort

    if "CUDAExecutionProvider" not in ort.get_available_providers():
        return "this onnxruntime has no CUDAExecutionProvider"
    return None


def _cuda_inputs(case: Case) -> dict:
    import cupy as cp

    if case.group == "cuda_group_norm":
        x, s, b = group_norm_inputs(case, cp)
        return {"X": x, "scale": s, "bias": b}
    return {"X": inverse_input(case, cp)}


def _make_cuda_impl(case: Case, key: str, label: str) -> Impl:
    why = cuda_unavailable_reason()
    if why:
        raise Unavailable(why)
    import cupy as cp

    feeds = _cuda_inputs(case)
    x = feeds["X"]
    out = cp.empty_like(x)
    sync = cp.cuda.Device().synchronize
    if key == "ours_cuda":
        sess = _ours_session(case, ("CUDAExecutionProvider", "CPUExecutionProvider"))
        if sess.get_providers()[0] != "CUDAExecutionProvider":
            raise Unavailable("ORT's CUDA provider could not start")
        io = sess.io_binding()
        for name, a in feeds.items():
            io.bind_input(name, "cuda", 0, a.dtype, list(a.shape), a.data.ptr)
        io.bind_output("Y", "cuda", 0, out.dtype, list(out.shape), out.data.ptr)  # preallocated: no allocation per run

        def run():
            sess.run_with_iobinding(io)
            return out

        sync()
        return Impl(key, label, run, sync, keep=(sess, io, feeds, out))
    if key == "ours_direct_cuda":
        import ortcustom.kernels as k

        if case.group == "cuda_inverse":
            return Impl(key, label, lambda: k.inverse(x, out=out), sync, info=True, keep=(feeds, out))
        s, b = feeds["scale"], feeds["bias"]
        return Impl(key, label, lambda: k.group_norm(x, case.groups, s, b, epsilon=EPS, out=out), sync, info=True,
                    keep=(feeds, out))
    if key == "cupy":
        return Impl(key, label, lambda: cp.linalg.inv(x), sync, keep=(feeds,))
    if key == "copy":
        nbytes = x.nbytes

        def copy():
            out.data.copy_from_device_async(x.data, nbytes)  # cudaMemcpyAsync device to device
            return out

        return Impl(key, label, copy, sync, expected=cp.asnumpy(x), keep=(feeds, out))
    if key == "torch_cuda":
        try:
            import torch
        except ImportError as e:
            raise Unavailable(f"no torch: {e}")
        if not torch.cuda.is_available():
            raise Unavailable(f"torch {torch.__version__} has no CUDA here")
        xt = torch.as_tensor(x, device="cuda")  # zero-copy via __cuda_array_interface__
        tsync = torch.cuda.synchronize
        if case.group == "cuda_inverse":
            return Impl(key, label, lambda: torch.linalg.inv(xt), tsync, keep=(feeds,))
        st, bt = (torch.as_tensor(feeds[n], device="cuda") for n in ("scale", "bias"))
        gn = torch.nn.functional.group_norm
        return Impl(key, label, lambda: gn(xt, case.groups, st, bt, EPS), tsync, keep=(feeds,))
    raise ValueError(f"no implementation {key!r} for {case.group}")


# ---------------------------------------------------------------------------------------------
# checking and timing


def check(case: Case, impl: Impl, ref: np.ndarray | None = None) -> None:
    """Runs `impl` once and compares with the case's float64 reference (or impl.expected)."""
    y = to_host(impl.fn())
    if impl.sync:
        impl.sync()
    want = impl.expected if impl.expected is not None else (ref if ref is not None else reference(case))
    want = np.asarray(want, dtype=np.float64).reshape(-1)
    got = np.asarray(y, dtype=np.float64).reshape(-1)
    err = np.max(np.abs(got - want)) / max(1.0, float(np.max(np.abs(want))))
    if not err <= tolerance(case.dtype):
        raise AssertionError(f"{case.key}: {impl.label} is off by {err:.3g} (relative to max |ref|)")


def _time(impl: Impl, loops: int) -> float:
    fn = impl.fn
    t0 = time.perf_counter()
    for _ in range(loops):
        fn()
    if impl.sync:
        impl.sync()
    return time.perf_counter() - t0


def measure(impls: list[Impl], reps: int, warmup: int = 2, min_time: float = 0.01,
            settle: float = 0.15) -> dict[str, list[float]]:
    """Seconds per run of each impl, one sample per rep (the runner prints their median and the
    slowest / fastest: the spread, whether the time is stable within one process): `warmup` runs, then each rep runs an impl `loops` times
    (enough for `min_time`) and divides; reps are interleaved across impls (rotating the order) so
    that drift in the machine hits all of them alike.

    Before each impl's turn the runner sleeps `settle` seconds: thread pools spin after a call
    (OpenBLAS for about 2**28 cycles, libgomp, ORT's workers), and on a 2-core machine the last
    impl's spinning threads would otherwise steal the cores of the next one (seen: torch's
    group_norm at (2,320,64,64) took 7.6 ms right after ORT sessions, 0.87 ms alone)."""
    loops = {}
    for im in impls:
        time.sleep(settle)
        for _ in range(warmup):
            im.fn()
        t = _time(im, 1)
        loops[im.key] = max(1, min(100_000, math.ceil(min_time / max(t, 1e-9))))
    samples = {im.key: [] for im in impls}
    for r in range(reps):
        k = r % len(impls) if impls else 0
        for im in impls[k:] + impls[:k]:
            time.sleep(settle)
            _time(im, 1)  # untimed: wakes the cores the pause let sleep
            samples[im.key].append(_time(im, loops[im.key]) / loops[im.key])
    return samples


from . import (cholesky_cases, contrib_group_norm, eigh_cases, qr_cases, searchsorted_cases, solve_cases,  # noqa: E402
               solve_triangular_cases, svd_cases, torch_op_cases)  # (after Case, Goal, Impl)

_add_groups(contrib_group_norm)
_add_groups(torch_op_cases)
_add_groups(searchsorted_cases)
_add_groups(cholesky_cases)
_add_groups(solve_triangular_cases)
_add_groups(solve_cases)
_add_groups(svd_cases)
_add_groups(qr_cases)
_add_groups(eigh_cases)
