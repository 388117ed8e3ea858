"""Leaks: many runs of each op (and of each error path) with bounded RSS growth.

The default run does 5,000 runs per case: with inputs of 16-32 KiB, a leaked input, output or
temporary per run would grow RSS by 80+ MiB, far over the 12 MiB bound. The slow form
(`pytest -m slow`, deselected otherwise) does 100,000 runs per case under the same bound, so a leak
of more than ~120 bytes per run (an OrtStatus, a message string, a Python object) fails it.

RSS is read from /proc/self/statm after a warm-up of the same shapes (ORT's arena, NumPy's and
glibc's caches reach their steady state), with a gc.collect() on both sides.
"""
import gc

import numpy as np
import onnxruntime as ort
import pytest

import ortcustom
from ortcustom import Domain, Input, Op, Output
from ortcustom.ops import GroupNorm, Inverse
from ortcustom.testing import make_model

from helpers import CPU, InvalidArgument, OrtFail, rss_bytes, under_asan, well_conditioned

# ASan keeps freed memory in quarantine (256 MiB by default): RSS says nothing there. It checks
# leaks of our own code differently (LSan), and these tests still run the paths under it.
pytestmark = pytest.mark.skipif(under_asan(), reason="RSS is meaningless under AddressSanitizer (quarantine)")
BOUND = 12 * 2 ** 20

Double = Op("LeakDouble", inputs=[Input("X", "float")], outputs=[Output("Y", "float", shape="X")],
            compute=lambda X: X * np.float32(2))
DOM = Domain("org.leaks").add(Inverse, GroupNorm, Double)


def _session(op, inputs, attrs=None):
    so = ortcustom.session_options(DOM)
    so.log_severity_level = 4  # the error cases would log every failed run
    so.intra_op_num_threads = 1
    model = make_model(op, DOM, inputs, attrs=attrs)
    return ort.InferenceSession(model.SerializeToString(), so, providers=CPU)


def _cases():
    rng = np.random.default_rng(0)
    inv = _session(Inverse, {"X": (np.float64, ["b", 16, 16])})
    a = well_conditioned(rng, (8, 16, 16), np.float64)                 # 16 KiB in, 16 KiB out
    gn = _session(GroupNorm, {"X": (np.float32, ["n", 8, "s"]), "num_groups": (np.int64, []),
                              "scale": (np.float32, [8]), "bias": (np.float32, [8])})
    gx = {"X": rng.standard_normal((4, 8, 256)).astype(np.float32), "num_groups": np.array(4),
          "scale": np.ones(8, np.float32), "bias": np.zeros(8, np.float32)}  # 32 KiB
    py = _session(Double, {"X": (np.float32, ["n"])})
    px = rng.standard_normal(8192).astype(np.float32)                  # 32 KiB
    bad_gn = dict(gx, num_groups=np.array(3))                           # an error status per run
    bad_inv = _session(Inverse, {"X": (np.float64, None)})

    return {
        "inverse": lambda: inv.run(None, {"X": a}),
        "group_norm": lambda: gn.run(None, gx),
        "python_kernel": lambda: py.run(None, {"X": px}),
        "group_norm_error": _raises(InvalidArgument, "GroupNorm (node 'n0'): num_groups must be positive and "
                                    "divide the 8 channels of X, got 3", lambda: gn.run(None, bad_gn)),
        "inverse_shape_error": _raises(InvalidArgument, "Inverse (node 'n0'): input X has shape (8, 16, 8); "
                                       "expected (..., N, N)", lambda: bad_inv.run(None, {"X": a[:, :, :8]})),
        "python_kernel_error": _raising_python_kernel(px),
    }


def _raises(exc, message, call):
    """A run: call() must raise `exc` with `message` in its text (a cheap check, done every run)."""
    def run():
        try:
            call()
        except exc as e:
            assert message in str(e), str(e)
            return
        raise AssertionError(f"expected {exc.__name__}: {message}")
    return run


def _raising_python_kernel(px):
    """A Python kernel that raises: traceback formatting, the status, the exception, per run."""
    Boom = Op("LeakBoom", inputs=[Input("X", "float")], outputs=[Output("Y", "float")],
              compute=lambda X: (_ for _ in ()).throw(ValueError("boom " + "x" * 200)))
    d = Domain("org.leaks.boom").add(Boom)
    so = ortcustom.session_options(d)
    so.log_severity_level = 4
    sess = ort.InferenceSession(make_model(Boom, d, {"X": (np.float32, ["n"])}).SerializeToString(), so,
                                providers=CPU)
    return _raises(OrtFail, "LeakBoom (node 'n0'): the Python kernel raised ValueError: boom xxx",
                   lambda: sess.run(None, {"X": px}))


CASES = ["inverse", "group_norm", "python_kernel", "group_norm_error", "inverse_shape_error", "python_kernel_error"]


@pytest.fixture(scope="module")
def cases():
    return _cases()


def _growth(run, n):
    for _ in range(max(500, n // 20)):  # warm-up
        run()
    gc.collect()
    before = rss_bytes()
    for _ in range(n):
        run()
    gc.collect()
    return rss_bytes() - before


@pytest.mark.parametrize("case", CASES)
def test_5k_runs_rss_bounded(cases, case):
    grown = _growth(cases[case], 5_000)
    assert grown < BOUND, f"{case}: RSS grew by {grown / 2 ** 20:.1f} MiB over 5,000 runs"


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES)
def test_100k_runs_rss_bounded(cases, case):
    grown = _growth(cases[case], 100_000)
    assert grown < BOUND, f"{case}: RSS grew by {grown / 2 ** 20:.1f} MiB over 100,000 runs"


@pytest.mark.parametrize("n", [200, pytest.param(2_000, marks=pytest.mark.slow)])
def test_sessions_created_and_dropped_rss_bounded(n):
    model = make_model(Inverse, DOM, {"X": (np.float32, [3, 3])}).SerializeToString()
    bad = make_model(GroupNorm, DOM, {"X": (np.float32, [1, 4, 3])}, attrs={"epsilon": -1.0}).SerializeToString()
    unaccepted = make_model(Inverse, DOM, {"X": (np.int32, [2, 2])}, outputs={"Y": (np.int32, [2, 2])}).SerializeToString()
    creation_errors = [(bad, "GroupNorm (node 'n0'): attribute epsilon=-1.0 is invalid: must be >= 0"),
                       (unaccepted, "Inverse (node 'n0'): no kernel for input types (X: int32)")]
    x = 2 * np.eye(3, dtype=np.float32)

    def cycle(n):
        for _ in range(n):
            so = ortcustom.session_options(DOM)
            so.log_severity_level = 4
            s = ort.InferenceSession(model, so, providers=CPU)
            assert s.run(None, {"X": x})[0][0, 0] == 0.5
            for m, message in creation_errors:  # kernel creation fails: attribute error, type guard
                with pytest.raises(Exception) as e:
                    ort.InferenceSession(m, so, providers=CPU)
                assert message in str(e.value)
            del s, so

    cycle(50)
    gc.collect()
    before = rss_bytes()
    cycle(n)
    gc.collect()
    grown = rss_bytes() - before
    assert grown < BOUND, f"RSS grew by {grown / 2 ** 20:.1f} MiB over {n} session cycles"
