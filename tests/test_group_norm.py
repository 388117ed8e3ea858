import numpy as np
import onnxruntime as ort
import pytest

import ortcustom
from ortcustom.ops import GroupNorm
from ortcustom.testing import make_model

from helpers import CPU, session

torch = pytest.importorskip("torch")
DOM = ortcustom.Domain("ortcustom").add(GroupNorm)
TOL = {np.float32: (1e-5, 1e-5), np.float64: (1e-12, 1e-12), np.float16: (1e-2, 1e-2)}


def feeds(x, groups, scale, bias):
    f = {"X": x, "num_groups": None if groups is None else np.array(groups, np.int64), "scale": scale, "bias": bias}
    return {k: v for k, v in f.items() if v is not None}


def run(x, groups, scale=None, bias=None, epsilon=None, attr_groups=None):
    inputs = {"X": (x.dtype, ["N", x.shape[1]] + ["s"] * (x.ndim - 2)),
              "num_groups": None if attr_groups else (np.int64, []),
              "scale": (x.dtype, [x.shape[1]]) if scale is not None else None,
              "bias": (x.dtype, [x.shape[1]]) if bias is not None else None}
    attrs = {}
    if epsilon is not None:
        attrs["epsilon"] = epsilon
    if attr_groups:
        attrs["num_groups"] = attr_groups
    sess = session(GroupNorm, DOM, inputs, attrs=attrs)
    return sess.run(None, feeds(x, None if attr_groups else groups, scale, bias))[0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("shape", [(2, 6), (1, 6, 7), (3, 12, 5, 4), (2, 8, 3, 4, 5), (0, 4, 3), (2, 4, 0)])
def test_matches_torch_and_numpy(dtype, shape):
    rng = np.random.default_rng(sum(shape))
    C = shape[1]
    for groups in sorted({1, C, 2 if C % 2 == 0 else 1}):
        x = (rng.standard_normal(shape) * 3 + 1).astype(dtype)
        scale, bias = rng.standard_normal(C).astype(dtype), rng.standard_normal(C).astype(dtype)
        y = run(x, groups, scale, bias)
        assert y.shape == x.shape and y.dtype == x.dtype
        rtol, atol = TOL[dtype]
        ref = GroupNorm.reference(x, np.array(groups), scale, bias)
        np.testing.assert_allclose(y.astype(np.float64), ref.astype(np.float64), rtol=rtol, atol=atol)
        if dtype != np.float16 and x.size:
            t = torch.nn.functional.group_norm(torch.from_numpy(x), groups, torch.from_numpy(scale),
                                               torch.from_numpy(bias), eps=1e-5).numpy()
            # torch's own rounding is amplified by 1/sqrt(var + eps) on near-constant groups
            np.testing.assert_allclose(y, t, rtol=1e-4, atol=1e-4)


def test_stable_on_large_groups_with_offset():
    rng = np.random.default_rng(0)
    x = (1000 + rng.standard_normal((1, 4, 1000, 1000))).astype(np.float32)  # groups of 2e6 elements
    y = run(x, 2)
    ref = GroupNorm.reference(x.astype(np.float64), np.array(2))
    np.testing.assert_allclose(y, ref, atol=2e-3)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("where", ["fresh", "unaligned", "in_place"])
@pytest.mark.parametrize("shape, groups", [((2, 64, 97, 89), 16), ((1, 2, 1031, 1021), 1)])
def test_large_outputs_stored_past_the_caches(dtype, where, shape, groups):
    # outputs from 4 MiB are stored non-temporally (kernels/cpu/group_norm.cpp) unless input and
    # output fit in what the cache keeps between calls (an AMD L3: the shapes grow past it), in
    # whole groups per task (the first shape) or in chunks of one large group (the second); odd
    # spatial sizes leave channel rows at every alignment, and an output one element past an
    # aligned one, or the input itself, must come out the same
    from ortcustom import kernels
    from ortcustom.native import builtin_info

    keeps = builtin_info("cache_keeps_bytes")
    grow = max(1, -(-(keeps + 1) // (2 * int(np.prod(shape)) * np.dtype(dtype).itemsize)))
    shape = (shape[0] * grow,) + shape[1:] if groups > 1 else (1, shape[1] * grow) + shape[2:]
    rng = np.random.default_rng(5)
    x = (rng.standard_normal(shape) * 2 + 5).astype(dtype)
    x0 = x.copy()
    scale, bias = rng.standard_normal(shape[1]).astype(dtype), rng.standard_normal(shape[1]).astype(dtype)
    ref = GroupNorm.reference(x.astype(np.float64), np.array(groups), scale.astype(np.float64), bias.astype(np.float64))
    if where == "fresh":
        y = kernels.group_norm(x, groups, scale, bias)
    elif where == "unaligned":
        out = np.full(x.size + 1, np.nan, dtype)[1:].reshape(shape)
        y = kernels.group_norm(x, groups, scale, bias, out=out)
        assert y is out
    else:
        y = kernels.group_norm(x, groups, scale, bias, out=x)
        assert y is x
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(y, ref, rtol=rtol * 10, atol=atol * 10)
    np.testing.assert_array_equal(run(x0, groups, scale, bias), y)  # a session: the same bits


def test_tiny_groups_and_constant_input():
    x = np.full((2, 4, 1), 7.0, np.float32)  # zero variance: (x - mean) = 0, finite output
    np.testing.assert_array_equal(run(x, 4), np.zeros_like(x))


def test_scale_and_bias_optional_and_epsilon_attribute():
    x = np.random.default_rng(1).standard_normal((2, 4, 9)).astype(np.float32)
    ref = GroupNorm.reference(x, np.array(2), epsilon=0.5)
    np.testing.assert_allclose(run(x, 2, epsilon=0.5), ref, rtol=1e-5, atol=1e-6)


def test_num_groups_as_attribute_when_input_absent():
    x = np.random.default_rng(2).standard_normal((2, 6, 5)).astype(np.float32)
    s, b = np.ones(6, np.float32), np.zeros(6, np.float32)
    np.testing.assert_allclose(run(x, None, s, b, attr_groups=3), run(x, 3, s, b), rtol=1e-6)


@pytest.mark.parametrize("x_shape, groups, c_scale, c_bias, expect", [
    ((2, 6, 4), 4, 6, 6, "num_groups must be positive and divide the 6 channels of X, got 4"),
    ((2, 6, 4), 0, 6, 6, "num_groups must be positive and divide the 6 channels of X, got 0"),
    ((2, 6, 4), -2, 6, 6, "got -2"),
    ((2, 6, 4), 3, 5, 6, "input scale has shape (5,); expected (C,) = (6,)"),
    ((2, 6, 4), 3, 6, 7, "input bias has shape (7,); expected (C,) = (6,)"),
    ((6,), 3, 6, 6, "input X has shape (6,); expected (N, C, ...)"),
])
def test_bad_input_is_a_clear_error_and_session_survives(x_shape, groups, c_scale, c_bias, expect):
    inputs = {"X": (np.float32, None), "num_groups": (np.int64, []), "scale": (np.float32, None),
              "bias": (np.float32, None)}
    sess = session(GroupNorm, DOM, inputs)
    bad = {"X": np.ones(x_shape, np.float32), "num_groups": np.array(groups, np.int64),
           "scale": np.ones(c_scale, np.float32), "bias": np.ones(c_bias, np.float32)}
    with pytest.raises(ort.capi.onnxruntime_pybind11_state.InvalidArgument) as e:
        sess.run(None, bad)
    assert "GroupNorm (node 'n0')" in str(e.value) and expect in str(e.value)
    good = {"X": np.ones((1, 6, 2), np.float32), "num_groups": np.array(3, np.int64),
            "scale": np.ones(6, np.float32), "bias": np.full(6, 2, np.float32)}
    np.testing.assert_allclose(sess.run(None, good)[0], 2)


def test_num_groups_must_be_given_somehow():
    sess = session(GroupNorm, DOM, {"X": (np.float32, [1, 2, 2])})
    with pytest.raises(Exception, match="give num_groups, as the input num_groups or the attribute"):
        sess.run(None, {"X": np.ones((1, 2, 2), np.float32)})


@pytest.mark.parametrize("attrs, expect", [
    ({"epsilon": -1.0}, "attribute epsilon=-1.0 is invalid: must be >= 0"),
    ({"num_groups": -3}, "attribute num_groups=-3 is invalid"),
    ({"epsilon": 2}, "attribute 'epsilon' must be of type float, but the node gives an int"),
])
def test_bad_attributes_fail_at_session_creation(attrs, expect):
    model = make_model(GroupNorm, DOM, {"X": (np.float32, [1, 2, 2])}, attrs=attrs)
    with pytest.raises(Exception) as e:
        ort.InferenceSession(model.SerializeToString(), ortcustom.session_options(DOM), providers=CPU)
    assert "GroupNorm (node 'n0')" in str(e.value) and expect in str(e.value)
