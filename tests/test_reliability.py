"""Production robustness: bad inputs never take the process down, sessions survive errors, threads,
lifetimes, and a too-old runtime is refused clearly.

The bad-input table complements tests/test_inverse.py, tests/test_group_norm.py and
tests/test_op_api.py (which already cover non-square/low-rank X, int32 X, bad num_groups values,
scale/bias of the wrong length, epsilon < 0, epsilon given as int, Python kernels that raise or
return the wrong dtype). Every case here is: one session, a bad run (a clear error naming the op and
the node, or a documented result), then a good run of the same session that must be right.
"""
import gc
import os
import threading
import types

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import ortcustom
from ortcustom import Attr, Domain, Input, Op, Output, session as ocsession
from ortcustom.kernels import group_norm as direct_group_norm
from ortcustom.ops import GroupNorm, Inverse
from ortcustom.testing import for_runtime, make_model

from helpers import CPU, run_python, session, well_conditioned

InvalidArgument = ort.capi.onnxruntime_pybind11_state.InvalidArgument
OrtFail = ort.capi.onnxruntime_pybind11_state.Fail
HUGE = 2 ** 62


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _double(X):
    return X * X.dtype.type(2)


Double = Op("Double", inputs=[Input("X", "T")], outputs=[Output("Y", "T", shape="X")],
            types={"T": ["float", "double"]}, compute=_double)

GOOD_INV = 2 * np.eye(3, dtype=np.float32)
GOOD_GN = {"X": np.arange(12, dtype=np.float32).reshape(1, 4, 3), "num_groups": np.array(2, np.int64)}


def check_inverse_works(sess):
    np.testing.assert_allclose(sess.run(None, {"X": GOOD_INV})[0], GOOD_INV / 4)


def gn_feeds(feeds):
    """`feeds` for gn_sess (whose graph takes X, num_groups, scale and bias): scale 1, bias 0 unless given."""
    x = feeds["X"]
    c = x.shape[1] if x.ndim >= 2 else 1
    out = {"scale": np.ones(c, x.dtype), "bias": np.zeros(c, x.dtype)}
    out.update(feeds)
    return out


def check_group_norm_works(sess):
    feeds = gn_feeds(GOOD_GN) if len(sess.get_inputs()) == 4 else dict(GOOD_GN)
    ref = GroupNorm.reference(GOOD_GN["X"], np.array(2))
    np.testing.assert_allclose(sess.run(None, feeds)[0], ref, rtol=1e-5, atol=1e-5)


# ---- the bad-input table: run time ----------------------------------------------------------

INV_DOM = Domain("org.rel.inv").add(Inverse)
GN_DOM = Domain("org.rel.gn").add(GroupNorm)
PY_DOM = Domain("org.rel.py").add(Double)


@pytest.fixture(scope="module")
def inv_sess():
    return session(Inverse, INV_DOM, {"X": (np.float32, None)})  # unknown rank: everything reaches us


@pytest.fixture(scope="module")
def gn_sess():
    return session(GroupNorm, GN_DOM, {"X": (np.float32, None), "num_groups": (np.int64, None),
                                       "scale": (np.float32, None), "bias": (np.float32, None)})


@pytest.fixture(scope="module")
def py_sess():
    return session(Double, PY_DOM, {"X": (np.float32, None)})


@pytest.mark.parametrize("feed, expect", [
    ({"X": np.ones((1,) * 15 + (2, 2), np.float32)}, "input X has rank 17; ortcustom kernels take at most 16"),
    ({"X": np.eye(3)}, "Unexpected input data type. Actual: (tensor(double))"),            # ORT's check
    ({"X": np.eye(3, dtype=np.int64)}, "Unexpected input data type. Actual: (tensor(int64))"),
    ({"X": np.ones((3, 0), np.float32)}, "input X has shape (3, 0)"),                     # empty, not square
    ({"X": np.ones((2, 0, 3), np.float32)}, "input X has shape (2, 0, 3)"),
], ids=["rank17", "double-into-float", "int64", "empty-nonsquare", "empty-batch-nonsquare"])
def test_inverse_bad_run_inputs(inv_sess, feed, expect):
    with pytest.raises(Exception) as e:
        inv_sess.run(None, feed)
    assert expect in str(e.value)
    check_inverse_works(inv_sess)


def test_inverse_rank_16_is_the_limit_and_works(inv_sess):
    x = np.broadcast_to(GOOD_INV[:2, :2], (1,) * 14 + (2, 2)).copy()
    np.testing.assert_allclose(inv_sess.run(None, {"X": x})[0], x / 4)


@pytest.mark.parametrize("shape", [(0, 0), (5, 0, 0), (0, 7, 7), (1, 0, 3, 3)])
def test_inverse_empty_tensors_give_empty_results(inv_sess, shape):
    y = inv_sess.run(None, {"X": np.ones(shape, np.float32)})[0]
    assert y.shape == shape and y.dtype == np.float32
    check_inverse_works(inv_sess)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_inverse_nan_and_inf_stay_in_their_matrix(dtype):
    # Documented: non-finite input gives non-finite output for that matrix only; the batch's other
    # matrices are exact, and the session keeps working.
    sess = session(Inverse, INV_DOM, {"X": (dtype, ["b", 2, 2])})
    x = np.stack([np.eye(2) * 2, [[np.nan, 1], [1, 1]], np.eye(2) * 4, [[np.inf, 1], [1, 1]],
                  [[-np.inf, np.inf], [1, 1]], np.eye(2) * 8]).astype(dtype)
    y = sess.run(None, {"X": x})[0].astype(np.float64)
    np.testing.assert_allclose(y[[0, 2, 5]], np.stack([np.eye(2) / 2, np.eye(2) / 4, np.eye(2) / 8]))
    assert np.isnan(y[1]).all()
    assert not np.isfinite(y[4]).all()
    # inf on the diagonal: the pivot is inf, a documented IEEE result (finite or not, never a crash)
    assert y[3].shape == (2, 2)
    np.testing.assert_allclose(sess.run(None, {"X": x[[0]]})[0].astype(np.float64), [np.eye(2) / 2])


@pytest.mark.parametrize("feed, expect", [
    ({"X": np.ones((1, 2) + (1,) * 15, np.float32), "num_groups": np.array(1)}, "input X has rank 17"),
    ({"X": np.ones((1, 4, 3), np.float32), "num_groups": np.array([], np.int64)},
     "input num_groups has shape (0,); expected one int64 value"),
    ({"X": np.ones((1, 4, 3), np.float32), "num_groups": np.array([2, 2], np.int64)},
     "input num_groups has shape (2,); expected one int64 value"),
    ({"X": np.ones((1, 4, 3), np.float32), "num_groups": np.array(HUGE, np.int64)},
     f"divide the 4 channels of X, got {HUGE}"),
    ({"X": np.ones((1, 4, 3), np.float32), "num_groups": np.array(-2 ** 63, np.int64)}, f"got {-2 ** 63}"),
    ({"X": np.ones((1, 4, 3), np.float32), "num_groups": np.array(2), "scale": np.ones((1, 4), np.float32)},
     "input scale has shape (1, 4); expected (C,) = (4,)"),
    ({"X": np.ones((1, 4, 3), np.float32), "num_groups": np.array(2), "bias": np.ones((), np.float32)},
     "input bias has shape (); expected (C,) = (4,)"),
    ({"X": np.ones((1, 4, 3), np.float32), "num_groups": np.array(2), "scale": np.ones(0, np.float32)},
     "input scale has shape (0,); expected (C,) = (4,)"),
    ({"X": np.ones((1, 0, 3), np.float32), "num_groups": np.array(2), "scale": np.ones(4, np.float32)},
     "input scale has shape (4,); expected (C,) = (0,)"),
    ({"X": np.ones((1, 4, 3), np.float32), "num_groups": np.array(2, np.int32)}, "Unexpected input data type"),
    ({"X": np.ones((1, 4, 3)), "num_groups": np.array(2)}, "Unexpected input data type"),
    ({"X": np.ones((1, 4, 3), np.float32), "num_groups": np.array(2), "scale": np.ones(4)},
     "Unexpected input data type"),
], ids=["rank17", "groups-empty", "groups-2", "groups-huge", "groups-min", "scale-rank2", "bias-0d",
        "scale-empty", "C0-scale4", "groups-int32", "X-double", "scale-double"])
def test_group_norm_bad_run_inputs(gn_sess, feed, expect):
    with pytest.raises(Exception) as e:
        gn_sess.run(None, gn_feeds(feed))
    assert expect in str(e.value)
    if "Unexpected" not in expect:
        assert "GroupNorm (node 'n0')" in str(e.value)
    check_group_norm_works(gn_sess)


@pytest.mark.parametrize("shape, groups", [((0, 4, 3), 2), ((2, 0, 3), 3), ((2, 4, 0), 4), ((2, 4, 0, 5), 1),
                                           ((0, 0), 1)])
def test_group_norm_empty_tensors_give_empty_results(gn_sess, shape, groups):
    y = gn_sess.run(None, gn_feeds({"X": np.ones(shape, np.float32), "num_groups": np.array(groups)}))[0]
    assert y.shape == shape
    check_group_norm_works(gn_sess)


def test_group_norm_nan_and_inf_stay_in_their_group(gn_sess):
    # Documented: a non-finite value poisons its own (n, group) only, like torch.
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    x[0, 0, 1] = np.nan   # sample 0, group 0
    x[1, 3, 0] = np.inf   # sample 1, group 1
    x[2, 2, 2] = -np.inf  # sample 2, group 1
    scale = np.ones(4, np.float32)
    scale[1] = np.nan     # channel 1 of every sample
    y = gn_sess.run(None, gn_feeds({"X": x, "num_groups": np.array(2), "scale": scale}))[0]
    t = torch.nn.functional.group_norm(torch.from_numpy(x), 2, torch.from_numpy(scale)).numpy()
    np.testing.assert_array_equal(np.isnan(y), np.isnan(t))
    assert np.isnan(y[0, :2]).all() and np.isnan(y[1, 2:]).all() and np.isnan(y[2, 2:]).all()
    assert np.isnan(y[:, 1]).all()
    finite = ~np.isnan(t)
    np.testing.assert_allclose(y[finite], t[finite], rtol=1e-4, atol=1e-4)
    check_group_norm_works(gn_sess)


@pytest.mark.parametrize("feed, expect", [
    ({"X": np.eye(2, dtype=np.int32)}, "Unexpected input data type"),
    ({"X": np.ones((2, 0, 3), np.float32)}, None),
    ({"X": np.array([np.nan, np.inf, -np.inf], np.float32)}, None),
])
def test_python_kernel_bad_and_odd_inputs(py_sess, feed, expect):
    if expect:
        with pytest.raises(Exception, match=expect):
            py_sess.run(None, feed)
    else:
        np.testing.assert_array_equal(py_sess.run(None, feed)[0], feed["X"] * 2)
    np.testing.assert_array_equal(py_sess.run(None, {"X": np.ones(2, np.float32)})[0], [2, 2])


# ---- dims whose product overflows int64, outputs that cannot be allocated -------------------
#
# NumPy refuses such arrays, and ORT's own ops (ConstantOfShape, Expand, Reshape) refuse to make
# them (SafeInt overflow) unless a 0 dim comes first: ORT multiplies dims left to right with
# overflow checks, so (0, 2**62, 2**62) is a legal empty tensor whose dims' product overflows, and
# it reaches our kernels through an OrtValue (or an ORT op's output).

def _empty_huge(shape, dtype=np.float32):
    return ort.OrtValue.ortvalue_from_shape_and_type(list(shape), dtype)


@pytest.mark.parametrize("shape", [(0, HUGE, HUGE), (0, 3, HUGE, HUGE), (0, 2 ** 31, 2 ** 31)])
def test_inverse_empty_tensor_with_overflowing_dims(inv_sess, shape):
    if shape[-1] != shape[-2]:
        with pytest.raises(InvalidArgument, match="expected \\(..., N, N\\)"):
            inv_sess.run_with_ort_values(None, {"X": _empty_huge(shape)})
    else:
        y = inv_sess.run_with_ort_values(None, {"X": _empty_huge(shape)})[0]
        assert y.shape() == list(shape)
    check_inverse_works(inv_sess)


@pytest.mark.parametrize("shape", [(0, 4, HUGE, HUGE), (2, 0, HUGE, HUGE), (0, HUGE, HUGE), (HUGE, 0)])
def test_group_norm_empty_tensor_with_overflowing_dims(shape):
    sess = session(GroupNorm, GN_DOM, {"X": (np.float32, None), "num_groups": (np.int64, [])})
    groups = ort.OrtValue.ortvalue_from_numpy(np.array(1, np.int64))
    y = sess.run_with_ort_values(None, {"X": _empty_huge(shape), "num_groups": groups})[0]
    assert y.shape() == list(shape)
    check_group_norm_works(sess)


def test_empty_overflowing_tensor_from_an_ort_op_reaches_inverse():
    graph = helper.make_graph(
        [helper.make_node("ConstantOfShape", ["s"], ["X"], value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1])),
         helper.make_node("Inverse", ["X"], ["Y"], domain=INV_DOM.name)], "g",
        [helper.make_tensor_value_info("s", TensorProto.INT64, [3])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    model = for_runtime(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                                helper.make_opsetid(INV_DOM.name, 1)]))
    sess = ort.InferenceSession(model.SerializeToString(), ortcustom.session_options(INV_DOM), providers=CPU)
    s = ort.OrtValue.ortvalue_from_numpy(np.array([0, HUGE, HUGE], np.int64))
    assert sess.run_with_ort_values(None, {"s": s})[0].shape() == [0, HUGE, HUGE]
    with pytest.raises(Exception, match="[Oo]verflow"):  # ORT's ConstantOfShape refuses this one
        sess.run(None, {"s": np.array([HUGE, HUGE, 0], np.int64)})
    y = sess.run(None, {"s": np.array([2, 1, 1], np.int64)})[0]
    np.testing.assert_array_equal(y, np.ones((2, 1, 1)))


def test_python_kernel_input_with_overflowing_dims_is_a_clear_error(py_sess):
    with pytest.raises(OrtFail, match="Double \\(node 'n0'\\): the Python kernel raised ValueError: array is too big"):
        py_sess.run_with_ort_values(None, {"X": _empty_huge((0, HUGE, HUGE))})
    np.testing.assert_array_equal(py_sess.run(None, {"X": np.ones(2, np.float32)})[0], [2, 2])


def _under_asan() -> bool:
    with open("/proc/self/maps") as f:
        return "libasan" in f.read()


@pytest.mark.skipif(_under_asan(), reason="ASan aborts on a 4 PiB operator new instead of throwing bad_alloc")
def test_output_that_cannot_be_allocated_is_a_clear_error():
    # a zero-stride view: 2**50 elements (4 PiB) that ORT must allocate for the output
    Huge = Op("HugeOut", [Input("X", "float")], [Output("Y", "float")],
              compute=lambda X: np.broadcast_to(np.float32(1), (2 ** 20, 2 ** 20, 2 ** 10)) if X[0] else X.copy())
    d = Domain("org.rel.huge").add(Huge)
    sess = session(Huge, d, {"X": (np.float32, [1])})
    with pytest.raises(Exception, match="Failed to allocate memory|bad_alloc"):
        sess.run(None, {"X": np.ones(1, np.float32)})
    np.testing.assert_array_equal(sess.run(None, {"X": np.zeros(1, np.float32)})[0], [0])


# ---- the bad-input table: session creation (types, missing inputs, attributes) --------------

def _create(op, dom, inputs, attrs=None, outputs=None):
    model = make_model(op, dom, inputs, attrs=attrs, outputs=outputs)
    return ort.InferenceSession(model.SerializeToString(), ortcustom.session_options(dom), providers=CPU)


@pytest.mark.parametrize("elem", ["int64", "uint8", "bool", "bfloat16", "int8"])
def test_inverse_unsupported_dtypes_fail_at_creation(elem):
    with pytest.raises(Exception) as e:
        _create(Inverse, INV_DOM, {"X": (elem, [2, 2])}, outputs={"Y": (elem, [2, 2])})
    assert f"no kernel for input types (X: {elem})" in str(e.value) and "T in {float, double, float16}" in str(e.value)


@pytest.mark.parametrize("inputs, expect", [
    ({"X": ("int64", None), "num_groups": ("int64", [])}, "no kernel for input types (X: int64, num_groups: int64)"),
    ({"X": ("bfloat16", None)}, "no kernel for input types (X: bfloat16"),
    ({"X": ("float", None), "num_groups": ("int32", [])}, "num_groups"),  # a fixed type: ORT's check
    ({"X": ("float", None), "num_groups": ("int64", []), "scale": ("double", [4])}, "tensor(double)"),
])
def test_group_norm_unsupported_or_mixed_dtypes_fail_at_creation(inputs, expect):
    out = inputs["X"][0]
    with pytest.raises(Exception) as e:
        _create(GroupNorm, GN_DOM, inputs, outputs={"Y": (out, None)})
    assert expect in str(e.value)


@pytest.mark.parametrize("op, dom, inputs, expect", [
    (Inverse, INV_DOM, {}, "has input size 0 not in range [min=1, max=1]"),
    (Inverse, INV_DOM, {"X": None, "Z": ("float", [1])}, "not in range [min=1, max=1]"),
    (GroupNorm, GN_DOM, {"X": None, "num_groups": ("int64", [])}, "input 0 is marked single but has an empty string"),
    (Double, PY_DOM, {}, "has input size 0"),
])
def test_missing_required_input_fails_at_creation(op, dom, inputs, expect):
    with pytest.raises(Exception) as e:
        _create(op, dom, inputs, outputs={"Y": ("float", None)})
    assert expect in str(e.value)


def test_required_input_missing_from_the_feed(inv_sess):
    with pytest.raises(ValueError, match="Required inputs \\(\\['X'\\]\\) are missing"):
        inv_sess.run(None, {})
    check_inverse_works(inv_sess)


@pytest.mark.parametrize("attrs, expect", [
    ({"num_groups": 1.5}, "attribute 'num_groups' must be of type int, but the node gives a float"),
    ({"num_groups": "two"}, "attribute 'num_groups' must be of type int, but the node gives a string"),
    ({"num_groups": [1, 2]}, "attribute 'num_groups' must be of type int, but the node gives an ints"),
    ({"epsilon": "x"}, "attribute 'epsilon' must be of type float, but the node gives a string"),
    # (the message says "an ints" for a floats attribute: ORT reads floats as an empty ints array)
    ({"epsilon": [1.0, 2.0]}, "attribute 'epsilon' must be of type float, but the node gives a"),
    ({"epsilon": float("nan")}, "attribute epsilon=nan is invalid: must be >= 0"),
    ({"epsilon": float("-inf")}, "attribute epsilon=-inf is invalid: must be >= 0"),
    ({"num_groups": -2 ** 63}, f"attribute num_groups={-2 ** 63} is invalid"),
])
def test_group_norm_bad_attributes_fail_at_creation(attrs, expect):
    with pytest.raises(Exception) as e:
        _create(GroupNorm, GN_DOM, {"X": ("float", [1, 4, 3])}, attrs=attrs)
    assert "GroupNorm (node 'n0')" in str(e.value) and expect in str(e.value)


@pytest.mark.parametrize("groups", [3, HUGE, 2 ** 63 - 1])
def test_group_norm_attribute_not_dividing_channels_is_a_run_error(groups):
    sess = session(GroupNorm, GN_DOM, {"X": (np.float32, [1, 4, 3])}, attrs={"num_groups": groups})
    with pytest.raises(InvalidArgument, match=f"divide the 4 channels of X, got {groups}"):
        sess.run(None, {"X": GOOD_GN["X"]})


def test_group_norm_infinite_epsilon_is_a_documented_result():
    # epsilon = inf is >= 0, so accepted: rstd = 0, the output is the bias.
    sess = session(GroupNorm, GN_DOM, {"X": (np.float32, [1, 4, 3]), "num_groups": (np.int64, []),
                                       "scale": (np.float32, [4]), "bias": (np.float32, [4])},
                   attrs={"epsilon": float("inf")})
    bias = np.arange(4, dtype=np.float32)
    y = sess.run(None, {"X": GOOD_GN["X"], "num_groups": np.array(2), "scale": np.ones(4, np.float32), "bias": bias})[0]
    np.testing.assert_array_equal(y, np.broadcast_to(bias[None, :, None], (1, 4, 3)))


_ABSENT_MIDDLE_INPUT = r"""
import numpy as np, onnxruntime as ort, ortcustom
from ortcustom.ops import GroupNorm
from ortcustom.testing import make_model
d = ortcustom.Domain("org.rel.absent").add(GroupNorm)
m = make_model(GroupNorm, d, {"X": (np.float32, [1, 4, 3]), "num_groups": None, "scale": None,
                              "bias": (np.float32, [4])}, attrs={"num_groups": 2})
s = ort.InferenceSession(m.SerializeToString(), ortcustom.session_options(d), providers=["CPUExecutionProvider"])
y = s.run(None, {"X": np.zeros((1, 4, 3), np.float32), "bias": np.arange(4, dtype=np.float32)})[0]
assert (y == np.arange(4, dtype=np.float32)[None, :, None]).all()
print("ok")
"""


def test_absent_optional_input_before_a_present_one_does_not_crash():
    # ORT 1.17-1.23 crash (SIGSEGV inside ORT, at session creation) on a custom-op node whose absent
    # optional input is followed by a present one; 1.24+ are fine. In a subprocess, so that on those
    # runtimes this test fails instead of ending the test run.
    r = run_python(_ABSENT_MIDDLE_INPUT)
    assert r.returncode == 0 and r.stdout.strip() == "ok", (
        f"onnxruntime {ort.__version__}: exit status {r.returncode}\n{r.stderr[-2000:]}")


def test_unknown_attribute_is_ignored():
    sess = session(Inverse, INV_DOM, {"X": (np.float32, [3, 3])}, attrs={"no_such_attr": 1})
    check_inverse_works(sess)


# ---- the Python API rejects bad arguments ---------------------------------------------------

@pytest.mark.parametrize("make, exc, match", [
    (lambda: Op("1bad", [Input("X", "float")], [Output("Y", "float")], compute=abs), ValueError, "identifier"),
    (lambda: Op("A", [Input("X", "float")], [], compute=abs), ValueError, "at least one output"),
    (lambda: Op("A", [Input("X", "T")], [Output("Y", "T")], types={"T": []}, compute=abs), ValueError, "allows no type"),
    (lambda: Op("A", [Input("X", "float")], [Output("X", "float")], compute=abs), ValueError, "must be unique"),
    (lambda: Op("A", [Input("X", "float", optional=True, variadic=True)], [Output("Y", "float")], compute=abs),
     ValueError, "both variadic and optional"),
    (lambda: Op("A", [Input("X", "float")], [Output("Y", "float")], attrs=[Attr("a", "complex", 0)], compute=abs),
     ValueError, "has kind 'complex'"),
    (lambda: Op("A", [Input("X", "float")], [Output("Y", "float")], attrs=[Attr("a", "int", 0), Attr("a", "int", 1)],
                compute=abs), ValueError, "attribute names must be unique"),
    (lambda: Op("A", [Input("X", "float")], [Output("Y", "float")], attrs=[Attr("a", "ints", default=(1, "x"))],
                compute=abs), ValueError, "default of attribute 'a' is invalid"),
    (lambda: Op("A", [Input("X", "float")], [Output("Y", "float")], since=0, compute=abs), ValueError, "since must be"),
    (lambda: Op("A", [Input("X", "float")], [Output("Y", "float")], native="inverse", compute=abs),
     ValueError, "exactly one of"),
    (lambda: Domain(""), ValueError, "non-empty name"),
    (lambda: Domain(None), ValueError, "non-empty name"),
    (lambda: Domain("ai.onnx"), ValueError, "ONNX's own domain"),
    (lambda: Domain("a").at("2"), ValueError, "domain version"),
    (lambda: ortcustom.register(None, Domain("a").add(Inverse)), TypeError, "onnxruntime.SessionOptions"),
    (lambda: ortcustom.session_options("org.a"), TypeError, "ortcustom.Domain objects"),
    (lambda: ortcustom.session_options(Domain("a").add(Inverse), Domain("b").add(Inverse), Domain("a").add(Double)),
     ValueError, "distinct names"),
    (lambda: direct_group_norm(np.ones((2, 4, 3)), 3), ValueError, "divide the 4 channels"),
    (lambda: direct_group_norm(np.ones((2, 4, 3)), 0), ValueError, "must be positive"),
    (lambda: direct_group_norm(np.ones(4), 1), ValueError, "expected \\(N, C, ...\\)"),
    (lambda: direct_group_norm(np.ones((2, 4, 3)), 2, epsilon=-1), ValueError, "epsilon=-1.0 is invalid: must be >= 0"),
    (lambda: direct_group_norm(np.ones((2, 4, 3)), 2, scale=np.ones(3)), ValueError, "scale has shape \\(3,\\)"),
    (lambda: direct_group_norm(np.ones((2, 4, 3)), 2, bias=np.ones((1, 4))), ValueError, "bias has shape"),
    (lambda: direct_group_norm(np.ones((2, 4, 3)), 2.5), TypeError, "num_groups"),  # silently truncated to 2
    (lambda: direct_group_norm(np.ones((2, 4, 3)), True), TypeError, "num_groups"),  # taken as 1
    (lambda: direct_group_norm(np.ones((2, 4, 3)), "2"), TypeError, None),
    (lambda: direct_group_norm(np.ones((2, 4, 3), np.int64), 2), TypeError, "accepts float32"),
])
def test_python_api_rejects_bad_arguments(make, exc, match):
    with pytest.raises(exc, match=match):
        make()


def test_direct_group_norm_on_nan_and_empty_inputs():
    x = np.ones((2, 4, 3))
    x[1, 0, 0] = np.nan
    y = direct_group_norm(x, 2)
    assert np.isnan(y[1, :2]).all() and (y[0] == 0).all() and (y[1, 2:] == 0).all()
    assert direct_group_norm(np.ones((0, 4, 3)), 2).shape == (0, 4, 3)
    assert direct_group_norm(np.ones((2, 0, 3)), 1).shape == (2, 0, 3)


_DIRECT_INVERSE = r"""
import numpy as np, re
from ortcustom.kernels import inverse
def raises(exc, match, f):
    try:
        f()
    except exc as e:
        assert re.search(match, str(e)), (match, str(e))
    else:
        raise AssertionError(f"no {exc.__name__} ({match})")
np.testing.assert_allclose(inverse(2 * np.eye(3)), np.eye(3) / 2)
y = inverse(np.stack([2 * np.eye(3), np.full((3, 3), np.nan)]))
np.testing.assert_allclose(y[0], np.eye(3) / 2)
assert np.isnan(y[1]).all()
assert inverse(np.ones((0, 3, 3))).shape == (0, 3, 3)
raises(TypeError, "accepts float32, float64, float16", lambda: inverse(np.eye(2, dtype=np.int32)))
raises(ValueError, r"expected \(\.\.\., N, N\)", lambda: inverse(np.ones((2, 3))))
raises(ValueError, r"expected \(\.\.\., N, N\)", lambda: inverse(np.ones(3)))
raises(ValueError, "out must be", lambda: inverse(np.eye(2), out=np.empty((3, 3))))
raises(ValueError, "out must be", lambda: inverse(np.eye(2), out=np.empty((2, 2), np.float32)))
raises(ValueError, "out must be", lambda: inverse(np.eye(2), out=np.empty((2, 2)).T))  # not C-contiguous
print("ok")
"""


def test_direct_inverse_api_checks_arguments_and_never_crashes():
    # in a subprocess: a crash here must fail this test, not end the test run
    r = run_python(_DIRECT_INVERSE)
    assert r.returncode == 0 and r.stdout.strip() == "ok", (
        f"ortcustom.kernels.inverse: exit status {r.returncode}\n{r.stderr[-2000:]}")


# ---- concurrency ------------------------------------------------------------------------------

def _run_threads(n, target):
    errors = []

    def wrap(i):
        try:
            target(i)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append((i, repr(e)))

    threads = [threading.Thread(target=wrap, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]


def test_one_session_8_threads_x_500_runs_every_result_checked():
    # inverse, group norm and a Python kernel in one session (three nodes), different inputs per run
    gn_dom = Domain("org.rel.mt").add(Inverse, GroupNorm, Double)
    graph = helper.make_graph(
        [helper.make_node("Inverse", ["A"], ["IA"], domain=gn_dom.name),
         helper.make_node("GroupNorm", ["X", "g"], ["GX"], domain=gn_dom.name),
         helper.make_node("Double", ["X"], ["DX"], domain=gn_dom.name)], "mt",
        [helper.make_tensor_value_info("A", TensorProto.DOUBLE, ["b", 4, 4]),
         helper.make_tensor_value_info("X", TensorProto.FLOAT, ["n", 6, "s"]),
         helper.make_tensor_value_info("g", TensorProto.INT64, [])],
        [helper.make_tensor_value_info(n, t, None) for n, t in
         (("IA", TensorProto.DOUBLE), ("GX", TensorProto.FLOAT), ("DX", TensorProto.FLOAT))])
    model = for_runtime(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                                helper.make_opsetid(gn_dom.name, 1)]))
    so = ortcustom.session_options(gn_dom)
    so.intra_op_num_threads = 2
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=CPU)

    def work(seed):
        rng = np.random.default_rng(seed)
        for i in range(500):
            b, n, s = rng.integers(1, 5), rng.integers(1, 4), rng.integers(1, 9)
            a = well_conditioned(rng, (b, 4, 4), np.float64)
            x = rng.standard_normal((n, 6, s)).astype(np.float32) + seed
            g = int(rng.choice([1, 2, 3, 6]))
            ia, gx, dx = sess.run(None, {"A": a, "X": x, "g": np.array(g, np.int64)})
            np.testing.assert_allclose(ia, np.linalg.inv(a), rtol=1e-9, atol=1e-12)
            np.testing.assert_allclose(gx, GroupNorm.reference(x, np.array(g)), rtol=1e-4, atol=1e-4)
            np.testing.assert_array_equal(dx, 2 * x)
            if i % 50 == 0:  # errors interleaved with good runs must not disturb other threads
                with pytest.raises(InvalidArgument, match="divide the 6 channels"):
                    sess.run(None, {"A": a, "X": x, "g": np.array(4, np.int64)})

    _run_threads(8, work)


def test_parallel_execution_mode():
    d = Domain("org.rel.par").add(Inverse, GroupNorm)
    nodes = []
    for k in range(4):  # four independent branches, run concurrently by ORT's inter-op pool
        nodes.append(helper.make_node("Inverse", ["A"], [f"I{k}a"], domain=d.name))
        nodes.append(helper.make_node("Inverse", [f"I{k}a"], [f"I{k}"], domain=d.name))
        nodes.append(helper.make_node("GroupNorm", ["X"], [f"G{k}"], domain=d.name, num_groups=2 ** (k % 3)))
    graph = helper.make_graph(
        nodes, "par",
        [helper.make_tensor_value_info("A", TensorProto.DOUBLE, ["b", 8, 8]),
         helper.make_tensor_value_info("X", TensorProto.FLOAT, ["n", 4, "s"])],
        [helper.make_tensor_value_info(f"{p}{k}", t, None) for k in range(4)
         for p, t in (("I", TensorProto.DOUBLE), ("G", TensorProto.FLOAT))])
    model = for_runtime(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                                helper.make_opsetid(d.name, 1)]))
    so = ortcustom.session_options(d)
    so.execution_mode = ort.ExecutionMode.ORT_PARALLEL
    so.inter_op_num_threads = 4
    so.intra_op_num_threads = 2
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=CPU)
    rng = np.random.default_rng(0)

    def work(seed):
        rng = np.random.default_rng(seed)
        for _ in range(30):
            a = well_conditioned(rng, (rng.integers(1, 6), 8, 8), np.float64)
            x = rng.standard_normal((2, 4, rng.integers(1, 50))).astype(np.float32)
            out = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, {"A": a, "X": x})))
            for k in range(4):
                np.testing.assert_allclose(out[f"I{k}"], a, rtol=1e-9, atol=1e-9)
                np.testing.assert_allclose(out[f"G{k}"], GroupNorm.reference(x, np.array(2 ** (k % 3))),
                                           rtol=1e-4, atol=1e-4)

    del rng
    _run_threads(3, work)


def test_several_sessions_with_different_domains_at_once():
    # each thread registers its own domains (concurrent registration), makes sessions and runs them
    def work(i):
        inv = Domain(f"org.rel.multi{i}").add(Inverse)
        own = Op(f"Add{i}", [Input("X", "float")], [Output("Y", "float", shape="X")],
                 compute=lambda X, i=i: X + np.float32(i))
        mine = Domain(f"org.rel.own{i}").add(own)
        for _ in range(3):
            s1 = session(Inverse, inv, {"X": (np.float64, ["b", 3, 3])})
            s2 = session(own, mine, {"X": (np.float32, ["n"])}, so=ortcustom.session_options(mine, inv))
            rng = np.random.default_rng(i)
            for _ in range(40):
                a = well_conditioned(rng, (2, 3, 3), np.float64)
                np.testing.assert_allclose(s1.run(None, {"X": a})[0], np.linalg.inv(a), rtol=1e-10, atol=1e-12)
                x = rng.standard_normal(5).astype(np.float32)
                np.testing.assert_array_equal(s2.run(None, {"X": x})[0], x + np.float32(i))

    _run_threads(8, work)


# ---- lifetimes --------------------------------------------------------------------------------

def test_domain_and_op_garbage_collected_while_sessions_live():
    def make():
        op = Op("Shift", [Input("X", "float")], [Output("Y", "float", shape="X")],
                compute=lambda X: X + np.float32(1))  # only the domain refers to this op
        d = Domain("org.rel.gc").add(op, Inverse)
        s1 = session(op, d, {"X": (np.float32, [2])})
        s2 = session(Inverse, d, {"X": (np.float32, [3, 3])})
        return s1, s2

    s1, s2 = make()
    gc.collect()
    for _ in range(3):
        np.testing.assert_array_equal(s1.run(None, {"X": np.zeros(2, np.float32)})[0], [1, 1])
        check_inverse_works(s2)
        del s1
        gc.collect()
        s1, s2 = make()
        gc.collect()


def test_session_options_dropped_before_the_session():
    d = Domain("org.rel.so").add(Inverse, Double)
    model = make_model(Inverse, d, {"X": (np.float32, [3, 3])})
    so = ortcustom.session_options(d)
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=CPU)
    sess2 = ort.InferenceSession(model.SerializeToString(), so, providers=CPU)
    del so, d
    gc.collect()
    check_inverse_works(sess)
    del sess
    gc.collect()
    check_inverse_works(sess2)


def test_same_domain_into_1000_session_options_memory_bounded():
    d = Domain("org.rel.many").add(Inverse, GroupNorm, Double)
    model = make_model(Inverse, d, {"X": (np.float32, [3, 3])}).SerializeToString()

    def batch(n):
        for i in range(n):
            so = ortcustom.session_options(d)
            if i % 100 == 0:
                check_inverse_works(ort.InferenceSession(model, so, providers=CPU))
            del so

    batch(100)  # warm-up: first-time allocations, ORT's lazily made state
    gc.collect()
    before = rss_bytes()
    batch(1000)
    gc.collect()
    grown = rss_bytes() - before
    # one OrtCustomOpDomain per distinct domain content, shared: the 1000 options cost ORT's own
    # SessionOptions objects (a few KB each at most). A leak of the domain/op structs per call would
    # be ~10 bindings x 1000. Bound: 16 MiB.
    assert grown < 16 * 2 ** 20, f"RSS grew by {grown / 2 ** 20:.1f} MiB over 1000 registrations"


def test_new_equal_domain_objects_reuse_registrations():
    # a Domain rebuilt with the same ops each time (as a server might per request) does not grow memory
    model = make_model(Inverse, "org.rel.same", {"X": (np.float32, [3, 3])}).SerializeToString()

    def batch(n):
        for _ in range(n):
            so = ortcustom.session_options(Domain("org.rel.same").add(Inverse, GroupNorm))
            del so

    batch(100)
    gc.collect()
    before = rss_bytes()
    batch(1000)
    gc.collect()
    assert rss_bytes() - before < 16 * 2 ** 20
    check_inverse_works(ort.InferenceSession(model, ortcustom.session_options(Domain("org.rel.same").add(Inverse)),
                                             providers=CPU))


# ---- ORT versions -----------------------------------------------------------------------------

@pytest.mark.parametrize("version", ["1.16.3", "1.9.0", "0.5.1", "1.16.0.dev20231001"])
def test_runtime_older_than_minimum_is_a_clear_error(version):
    with pytest.raises(RuntimeError, match=f"ortcustom needs onnxruntime >= 1.17 .*installed onnxruntime is {version}"):
        ocsession._check_ort_version(types.SimpleNamespace(__version__=version))


@pytest.mark.parametrize("version", ["1.17.0", "1.17.3", "1.31.1", "1.40.0.dev20260101", "2.0.0"])
def test_supported_runtimes_pass_the_check(version):
    ocsession._check_ort_version(types.SimpleNamespace(__version__=version))


def test_registration_with_too_old_runtime_raises_before_touching_ort(monkeypatch):
    monkeypatch.setattr(ort, "__version__", "1.16.3")
    so = ort.SessionOptions()
    with pytest.raises(RuntimeError, match="needs onnxruntime >= 1.17"):
        ortcustom.register(so, Domain("org.rel.old").add(Inverse))
    monkeypatch.undo()
    sess = session(Inverse, INV_DOM, {"X": (np.float32, [3, 3])})  # and then registration works
    check_inverse_works(sess)
