"""Property-based tests (hypothesis): the kernels, run by ONNX Runtime and called directly, against
NumPy and PyTorch over random shapes, dtypes, attributes and values.

Sessions are made once per (op, dtype, which optional inputs), with symbolic dims, and reused by
every example; each example is also run twice to check that a run does not depend on the previous.
"""
import functools

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import ortcustom
from ortcustom import Domain, Input, Op, Output
from ortcustom.kernels import group_norm as direct_group_norm
from ortcustom.ops import GroupNorm, Inverse

from helpers import assert_inverse, session

torch = pytest.importorskip("torch")

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow],
                    derandomize=True)
DTYPES = [np.float32, np.float64, np.float16]
DOM = Domain("org.prop").add(Inverse, GroupNorm)


@functools.lru_cache(maxsize=None)
def inverse_session(dtype):
    return session(Inverse, DOM, {"X": (np.dtype(dtype), None)})


@st.composite
def invertible(draw):
    dtype = draw(st.sampled_from(DTYPES))
    batch = draw(st.lists(st.integers(0, 3), max_size=2))
    n = draw(st.integers(1, 40 if dtype != np.float16 else 8))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    rng = np.random.default_rng(seed)
    # diagonally dominant by a margin: condition number bounded, so the tolerance can be fixed
    a = rng.uniform(-1, 1, tuple(batch) + (n, n))
    a += np.eye(n) * (np.abs(a).sum(-1, keepdims=True) + 1)
    if draw(st.booleans()):  # rows shuffled: the dominant entries off the diagonal, pivoting needed
        a = a[..., rng.permutation(n), :]
    scale = draw(st.sampled_from([1e-3, 1.0, 1e3])) if dtype != np.float16 else 1.0
    return (a * scale).astype(dtype)


TOL = {np.float32: 2e-4, np.float64: 1e-10, np.float16: 2e-2}


@SETTINGS
@given(x=invertible())
def test_inverse_matches_numpy_and_torch(x):
    dtype = x.dtype.type
    sess = inverse_session(dtype)
    y = sess.run(None, {"X": x})[0]
    assert y.shape == x.shape and y.dtype == x.dtype
    np.testing.assert_array_equal(sess.run(None, {"X": x})[0], y)  # deterministic, run after run
    assert_inverse(x, y)  # relative to the float64 inverse, and the residual
    tol = TOL[dtype]
    if x.size and dtype != np.float16:
        t = torch.linalg.inv(torch.from_numpy(x)).numpy()
        np.testing.assert_allclose(y, t, rtol=tol * 10, atol=tol * np.abs(t).max())


@SETTINGS
@given(x=invertible())
def test_inverse_of_inverse_is_identity_ish(x):
    assume(x.dtype != np.float16)
    sess = inverse_session(x.dtype.type)
    back = sess.run(None, {"X": sess.run(None, {"X": x})[0]})[0]
    np.testing.assert_allclose(back, x, rtol=TOL[x.dtype.type] * 10, atol=TOL[x.dtype.type] * np.abs(x).max(initial=1))


@st.composite
def group_norm_case(draw):
    dtype = draw(st.sampled_from(DTYPES))
    groups = draw(st.integers(1, 6))
    per_group = draw(st.integers(1, 4))
    C = groups * per_group
    N = draw(st.integers(0, 3))
    spatial = tuple(draw(st.lists(st.integers(0, 9), max_size=3)))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    rng = np.random.default_rng(seed)
    offset = draw(st.sampled_from([0.0, 10.0, -100.0]))
    spread = draw(st.sampled_from([1e-2, 1.0, 30.0]))
    x = (offset + spread * rng.standard_normal((N, C) + spatial)).astype(dtype)
    scale = rng.standard_normal(C).astype(dtype) if draw(st.booleans()) else None
    bias = rng.standard_normal(C).astype(dtype) if draw(st.booleans()) else None
    eps = draw(st.sampled_from([0.0, 1e-5, 0.5]))
    if eps == 0.0:
        assume(dtype != np.float16)
        spread = max(spread, 1.0)
    as_attr = draw(st.booleans())
    return x, groups, scale, bias, eps, as_attr


@functools.lru_cache(maxsize=None)
def _gn_session(dtype, has_scale, has_bias, as_attr, eps, groups):
    dt = np.dtype(dtype)
    inputs = {"X": (dt, None), "num_groups": None if as_attr else (np.int64, []),
              "scale": (dt, ["C"]) if has_scale else None, "bias": (dt, ["C"]) if has_bias else None}
    attrs = {"epsilon": eps}
    if as_attr:
        attrs["num_groups"] = groups
    return session(GroupNorm, DOM, inputs, attrs=attrs)


@SETTINGS
@given(case=group_norm_case())
def test_group_norm_matches_torch_and_numpy(case):
    x, groups, scale, bias, eps, as_attr = case
    dtype = x.dtype.type
    # an absent optional input before a present one crashes ORT < 1.24 itself: keep to trailing ones
    if scale is None and bias is not None and not _ort_handles_absent_middle_inputs():
        scale = np.ones(x.shape[1], dtype)
    if as_attr and (scale is not None or bias is not None) and not _ort_handles_absent_middle_inputs():
        as_attr = False
    sess = _gn_session(dtype, scale is not None, bias is not None, as_attr, eps, groups if as_attr else 0)
    feeds = {"X": x}
    if not as_attr:
        feeds["num_groups"] = np.array(groups, np.int64)
    if scale is not None:
        feeds["scale"] = scale
    if bias is not None:
        feeds["bias"] = bias
    y = sess.run(None, feeds)[0]
    assert y.shape == x.shape and y.dtype == x.dtype
    np.testing.assert_array_equal(sess.run(None, feeds)[0], y)
    ref = GroupNorm.reference(x.astype(np.float64), np.array(groups), None if scale is None else scale.astype(np.float64),
                              None if bias is None else bias.astype(np.float64), epsilon=eps)
    # error relative to the output's scale: |scale| * (values of order 1) + |bias|
    mag = (1.0 if scale is None else max(1.0, float(np.abs(scale).max(initial=1)))) + \
        (0.0 if bias is None else float(np.abs(bias).max(initial=0)))
    tol = {np.float32: 1e-4, np.float64: 1e-9, np.float16: 1e-2}[dtype] * mag
    if eps == 0.0:
        tol *= 10
    np.testing.assert_allclose(y.astype(np.float64), ref, rtol=0, atol=tol)
    if x.size and dtype != np.float16 and x[0, 0].size * (x.shape[1] // groups) > 1:  # torch: > 1 value per group
        t = torch.nn.functional.group_norm(torch.from_numpy(x), groups,
                                           None if scale is None else torch.from_numpy(scale),
                                           None if bias is None else torch.from_numpy(bias), eps=eps).numpy()
        # torch accumulates in the input's precision: compare at float32-level tolerance
        np.testing.assert_allclose(y, t, rtol=0, atol=max(tol, 1e-3 * mag) if dtype == np.float32 else 1e-7 * mag)
    # the direct kernel (no ORT; serial, so blocks may be merged in another order)
    d = direct_group_norm(x, groups, scale, bias, epsilon=eps)
    np.testing.assert_allclose(d.astype(np.float64), y.astype(np.float64), rtol=0, atol=tol)


@functools.lru_cache(maxsize=None)
def _ort_handles_absent_middle_inputs():
    import onnxruntime as ort

    return tuple(int(p) for p in ort.__version__.split(".")[:2]) >= (1, 24)


# A Python-kernel op against NumPy, over every dtype it declares and any shape (rank 0 to 5).
Affine = Op("Affine", inputs=[Input("X", "T")], outputs=[Output("Y", "T", shape="X")],
            types={"T": ["float", "double", "int64", "int32", "float16"]},
            attrs=[ortcustom.Attr("a", "int", default=3)], compute=lambda X, a: X * X.dtype.type(a) + X.dtype.type(1))
PY_DOM = Domain("org.prop.py").add(Affine)


@functools.lru_cache(maxsize=None)
def _affine_session(dtype, a):
    return session(Affine, PY_DOM, {"X": (np.dtype(dtype), None)}, attrs={"a": a})


@SETTINGS
@given(dtype=st.sampled_from([np.float32, np.float64, np.int64, np.int32, np.float16]),
       shape=st.lists(st.integers(0, 5), max_size=5), a=st.sampled_from([-2, 0, 3]), seed=st.integers(0, 2 ** 32 - 1))
def test_python_kernel_matches_numpy(dtype, shape, a, seed):
    x = np.asarray(np.random.default_rng(seed).standard_normal(shape) * 100).astype(dtype)
    y = _affine_session(dtype, a).run(None, {"X": x})[0]
    assert y.shape == x.shape and y.dtype == x.dtype
    np.testing.assert_array_equal(y, x * dtype(a) + dtype(1))
