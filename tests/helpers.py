"""Shared helpers for the tests: sessions of one-node models, test matrices, process checks."""
import ctypes
import os
import shutil
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest

import ortcustom
from ortcustom.testing import make_model

CPU = ["CPUExecutionProvider"]
InvalidArgument = ort.capi.onnxruntime_pybind11_state.InvalidArgument
OrtFail = ort.capi.onnxruntime_pybind11_state.Fail
HUGE = 2 ** 62  # a dim whose product with another overflows int64


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def session(op, domain, inputs, *, attrs=None, outputs=None, so=None, **kw):
    """An InferenceSession (CPU) of a one-node model of `op` registered in `domain`."""
    model = make_model(op, domain, inputs, attrs=attrs, outputs=outputs, **kw)
    if so is None:
        so = ortcustom.session_options(domain)
    return ort.InferenceSession(model.SerializeToString(), so, providers=CPU)


def under_asan() -> bool:
    """Whether this process runs under AddressSanitizer (libasan preloaded)."""
    with open("/proc/self/maps") as f:
        return "libasan" in f.read()


def well_conditioned(rng, shape, dtype):
    """Matrices of `shape` (..., n, n), random normal plus n I: diagonally dominant, cond(x) small,
    no row swap needed. `rng`: a NumPy Generator."""
    n = shape[-1]
    return (rng.standard_normal(shape) + n * np.eye(n)).astype(dtype)


def torch_well_conditioned(shape, dtype=None, seed=0):
    """well_conditioned as a torch tensor (float32 unless `dtype`), drawn from seed `seed`."""
    import torch

    x = well_conditioned(np.random.default_rng(seed), shape, np.float64)
    return torch.from_numpy(x).to(dtype or torch.float32)


EXPORTERS = [pytest.param(True, id="dynamo"), pytest.param(False, id="torchscript")]  # torch's two


@pytest.fixture(autouse=True)
def quiet_exporters():
    """Autouse where imported: the TorchScript exporter's deprecation, torch.export's notes, unshown."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def compile_kernels(sources, out, *flags):
    """Compiles C++ kernel sources against the installed ortcustom headers into the shared library
    `out` (what a package's build does, with the compiler directly), `flags` added; returns `out`.
    Skips the calling test where there is no C++ compiler (g++, or $CXX)."""
    cxx = shutil.which(os.environ.get("CXX", "g++"))
    if cxx is None:
        pytest.skip("no C++ compiler (g++, or $CXX)")
    r = subprocess.run([cxx, "-std=c++17", "-O1", "-shared", "-fPIC", "-fvisibility=hidden",
                        f"-I{ortcustom.get_include()}", *flags, *map(str, sources), "-o", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return out


def run_python(code, env=None, timeout=120):
    """Runs `code` in a fresh interpreter (a crash there fails the calling test, not the run)."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, env=env)


def run_threads(n, target):
    """Runs target(i) for i in range(n), each in a thread of its own; an exception in any thread fails
    the caller (an AssertionError naming how many failed, from the first one's exception)."""
    errors = []

    def wrap(i):
        try:
            target(i)
        except BaseException as e:  # noqa: BLE001 - re-raised below
            errors.append((i, e))

    threads = [threading.Thread(target=wrap, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        i, e = errors[0]
        raise AssertionError(f"{len(errors)} of {n} threads failed; thread {i}: {e!r}") from e


def row_cycled(rng, shape, dtype):
    """Well-conditioned matrices whose rows are moved by a random n-cycle (no row stays): the largest
    entry of a column is off the diagonal, so Gauss-Jordan must swap rows (pivot) at nearly every
    step, where well_conditioned's diagonally dominant matrices never need a swap."""
    def draw(k):
        x = well_conditioned(rng, (k,) + tuple(shape[-2:]), np.float64)
        n = shape[-1]
        for m in x:
            s = rng.permutation(n)
            rows = np.empty(n, np.intp)
            rows[s] = np.roll(s, -1)  # s[i] -> s[i + 1]: one cycle through every row
            m[:] = m[rows]
        return x

    return _checkable(draw, shape, dtype)


def random_normal(rng, shape, dtype):
    """Standard normal matrices: pivoting needed, condition numbers from tens to ~1e5 for n <= 300."""
    return _checkable(lambda k: rng.standard_normal((k,) + tuple(shape[-2:])), shape, dtype)


def _checkable(draw, shape, dtype, tries=50):
    """draw(k) -> k float64 matrices; each one whose inverse_bound in `dtype` is too loose to tell a
    wrong inverse from a right one (>= 0.01: cond(x) too large for the dtype) is drawn again."""
    n = shape[-1]
    x = draw(int(np.prod(shape[:-2], dtype=np.int64))).astype(dtype)
    for _ in range(tries):
        bad = np.flatnonzero(inverse_bound(x)[0] >= 0.01) if x.size else []
        if not len(bad):
            return x.reshape(shape)
        x[bad] = draw(len(bad)).astype(dtype)
    raise ValueError(f"no checkable {n}x{n} {np.dtype(dtype)} matrices from this generator (too ill-conditioned)")


# unit roundoff of the output type, and of the type the kernels compute in (float16: float)
_UNIT = {np.dtype(np.float16): (2.0 ** -11, 2.0 ** -24), np.dtype(np.float32): (2.0 ** -24, 2.0 ** -24),
         np.dtype(np.float64): (2.0 ** -53, 2.0 ** -53)}


def inverse_bound(x):
    """Per matrix of x: the error an inverse may have, relative to the exact one (of x's values, in
    float64), and as residual max|x @ y - I|: 2 (u_out + n u) cond(x), u the unit roundoff of the output
    and of the computation, cond in the inf-norm. Measured on the CPU kernel: below 0.2 n u cond."""
    n = x.shape[-1]
    a = x.astype(np.float64).reshape(-1, n, n)
    ref = np.linalg.inv(a)
    cond = np.abs(a).sum(-1).max(-1) * np.abs(ref).sum(-1).max(-1)
    u_out, u = _UNIT[x.dtype]
    return 2 * (u_out + n * u) * cond, a, ref


def assert_inverse(x, y):
    """y is the inverse of each matrix of x (any batch shape): same shape and dtype; per matrix, the
    error relative to the float64 inverse and the residual x @ y - I within inverse_bound. Refuses a
    case whose bound is too loose (>= 0.05) to tell a wrong output (all zeros: error 1) from a right one."""
    x, y = np.asarray(x), np.asarray(y)
    assert y.shape == x.shape and y.dtype == x.dtype, (y.shape, y.dtype, x.shape, x.dtype)
    if x.size == 0:
        return
    n = x.shape[-1]
    bound, a, ref = inverse_bound(x)
    assert (bound < 0.05).all(), f"the test case is too ill-conditioned to check: bound {bound.max():.3g}"
    b = y.astype(np.float64).reshape(-1, n, n)
    with np.errstate(invalid="ignore"):
        err = np.abs(b - ref).max((-2, -1)) / np.abs(ref).max((-2, -1))
        res = np.abs(a @ b - np.eye(n)).max((-2, -1))
    bad = ~((err <= bound) & (res <= bound))  # NaN fails too
    assert not bad.any(), (f"{bad.sum()} of {len(bad)} {n}x{n} {x.dtype} inverses are off: relative error "
                           f"{err[bad][:3]}, residual {res[bad][:3]}, allowed {bound[bad][:3]}")


def fused_unet_block(tmp_path):
    """A Stable Diffusion ResNet block's group norms (conv, GroupNorm + SiLU, conv, a residual add
    into GroupNorm + SiLU, conv; 32 groups, as there: the optimizer shipped with ORT 1.17 writes
    groups=32 whatever the model says), exported by the TorchScript exporter (its
    Reshape/InstanceNormalization/Reshape is what the fusion matches) and fused by
    onnxruntime.transformers.optimizer into com.microsoft GroupNorm and SkipGroupNorm (its sum S
    reused). Returns (model for the installed ORT, x, PyTorch's output)."""
    import pytest

    torch = pytest.importorskip("torch")
    pytest.importorskip("sympy")  # the optimizer's symbolic shape inference (SkipGroupNorm fusion)
    from onnxruntime.transformers.fusion_options import FusionOptions
    from onnxruntime.transformers.optimizer import optimize_model

    from ortcustom.testing import for_runtime

    silu = torch.nn.functional.silu

    class UNetBlock(torch.nn.Module):
        def __init__(self, c=64, groups=32):
            super().__init__()
            self.conv_in = torch.nn.Conv2d(4, c, 3, padding=1)
            self.norm1, self.conv1 = torch.nn.GroupNorm(groups, c), torch.nn.Conv2d(c, c, 3, padding=1)
            self.norm2, self.conv2 = torch.nn.GroupNorm(groups, c), torch.nn.Conv2d(c, c, 3, padding=1)
            for norm in (self.norm1, self.norm2):
                torch.nn.init.normal_(norm.weight)
                torch.nn.init.normal_(norm.bias)

        def forward(self, x):
            h = self.conv_in(x)
            t = h + self.conv1(silu(self.norm1(h)))
            return self.conv2(silu(self.norm2(t))) + t

    torch.manual_seed(0)
    model = UNetBlock().eval()
    x = torch.randn(2, 4, 16, 16)
    path = str(tmp_path / "block.onnx")
    torch.onnx.export(model, (x,), path, dynamo=False, opset_version=17, input_names=["x"], output_names=["y"])
    options = FusionOptions("unet")
    options.enable_nhwc_conv = False  # NhwcConv is another CUDA-only contrib op
    fused = optimize_model(path, model_type="unet", opt_level=0, optimization_options=options, use_gpu=False)
    with torch.no_grad():
        want = model(x).numpy()
    return for_runtime(fused.model), x.numpy(), want


def within_limit(fn, *args, limit_s=300):
    """fn(*args) in a daemon thread; fails the calling test if it has not returned within limit_s
    (far past any call's time: a deadlock never ends); returns what fn returned."""
    out = []
    t = threading.Thread(target=lambda: out.append(fn(*args)), daemon=True)
    t.start()
    t.join(limit_s)
    assert not t.is_alive(), f"{fn.__name__}{args} did not return within {limit_s} s (a deadlock)"
    return out[0]


def runner_library(tmp_path_factory, kernel_source, native_name, *flags):
    """ctypes' handle on kernels/cpu/<kernel_source> built with tests/native/<native_name>.cpp (its
    entries under the runners of tests/native/runners.h), the ISA dispatch and the serial runner:
    what the runner tests load (threads on, optimized; `flags` added)."""
    repo = Path(__file__).resolve().parent.parent
    cpu = repo / "kernels" / "cpu"
    so = compile_kernels([cpu / kernel_source, cpu / "isa.cpp", cpu / "serial_for.cpp",
                          repo / "tests" / "native" / f"{native_name}.cpp"],
                         tmp_path_factory.mktemp("runners") / f"{native_name}.so", "-pthread", "-O2", *flags)
    return ctypes.CDLL(str(so))
