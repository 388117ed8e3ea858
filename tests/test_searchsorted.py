"""SearchSorted (torch.searchsorted) in a session, by direct call, as a torch op, from both
exporters and in onnx's ReferenceEvaluator: every answer equal to torch's."""
import re
import warnings

import numpy as np
import onnxruntime as ort
import pytest

import ortcustom
from ortcustom import kernels
from ortcustom.ops import SearchSorted
from ortcustom.testing import make_model

from helpers import CPU, InvalidArgument, session

torch = pytest.importorskip("torch")
import ortcustom.torch_ops  # noqa: E402,F401  (torch.ops.ortcustom.*)

DOM = ortcustom.Domain("ortcustom").add(SearchSorted)
DTYPES = [np.float32, np.float64, np.float16, np.int8, np.uint8, np.int16, np.int32, np.int64]
NAMES = ("sorted_sequence", "values", "sorter")


def run_session(seq, values, sorter=None, **attrs):
    inputs = {"sorted_sequence": seq, "values": values}
    if sorter is not None:
        inputs["sorter"] = sorter
    sess = session(SearchSorted, DOM, {k: (v.dtype, None) for k, v in inputs.items()}, attrs=attrs or None)
    return sess.run(None, inputs)[0]


def torch_result(seq, values, sorter=None, right=0, side=""):
    kw = {"right": bool(right)}
    if side:
        kw["side"] = side
    if sorter is not None:
        kw["sorter"] = torch.from_numpy(sorter)
    return torch.searchsorted(torch.from_numpy(seq), torch.from_numpy(values), **kw).numpy()


def assert_all_paths(seq, values, sorter=None, right=0, side=""):
    """Session, direct call, torch op and NumPy reference all give torch's answer."""
    want = torch_result(seq, values, sorter, right, side)
    got = run_session(seq, values, sorter, right=right, side=side)
    assert got.dtype == np.int64 and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(kernels.search_sorted(seq, values, sorter, right=right, side=side), want)
    np.testing.assert_array_equal(SearchSorted.reference(seq, values, sorter, right=right, side=side), want)
    op = torch.ops.ortcustom.searchsorted(torch.from_numpy(seq), torch.from_numpy(values), 0, right, side,
                                          None if sorter is None else torch.from_numpy(sorter))
    np.testing.assert_array_equal(op.numpy(), want)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("right", [0, 1])
def test_every_length_with_duplicates(dtype, right):
    rng = np.random.default_rng(5)
    for n in list(range(0, 40)) + [63, 64, 65, 1000]:
        seq = np.sort(rng.integers(-20, 20, n)).astype(dtype)
        values = rng.integers(-25, 25, 97).astype(dtype)  # below, inside, between and above
        assert_all_paths(seq, values, right=right)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_nan_and_inf_as_torch(dtype):
    seq = np.array([-np.inf, -1, 0, 0, 2, np.inf, np.nan, np.nan], dtype)
    values = np.array([np.nan, -np.inf, np.inf, 0, 1, -5, 7, np.nan], dtype)
    for right in (0, 1):
        assert_all_paths(seq, values, right=right)
        assert_all_paths(seq[:6], values, right=right)


def test_unsorted_boundaries_give_torchs_answer_in_range():
    rng = np.random.default_rng(1)
    for n in (1, 2, 7, 100):
        seq = rng.standard_normal(n).astype(np.float32)
        values = rng.standard_normal(50).astype(np.float32)
        assert_all_paths(seq, values)
        assert ((run_session(seq, values) >= 0) & (run_session(seq, values) <= n)).all()


def test_batched_rows_and_value_shapes():
    rng = np.random.default_rng(2)
    seq = np.sort(rng.standard_normal((2, 3, 17)), axis=-1)
    for m in (0, 1, 5, 40):
        assert_all_paths(seq, rng.standard_normal((2, 3, m)))
    flat = np.sort(rng.standard_normal(9))  # a 1-D sequence serves values of any shape
    for shape in ((), (4,), (2, 3, 5), (0, 3)):
        assert_all_paths(flat, np.asarray(rng.standard_normal(shape)))
    assert_all_paths(np.zeros((2, 0)), rng.standard_normal((2, 3)))  # empty rows: all at 0


def test_side_overrides_right_and_sorter_sorts_each_row():
    rng = np.random.default_rng(3)
    seq = rng.integers(0, 10, (3, 12)).astype(np.float64)
    sorter = np.argsort(seq, axis=-1, kind="stable")
    values = rng.integers(-1, 11, (3, 20)).astype(np.float64)
    for right, side in ((0, ""), (1, ""), (0, "left"), (0, "right"), (1, "right")):
        assert_all_paths(seq, values, sorter, right, side)
        assert_all_paths(seq, values, None, right, side)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32])
def test_short_rows_counted_or_bisected_give_torchs_answers(dtype):
    """Short rows found ascending and NaN-free are searched by counting; the others (unsorted, a NaN
    boundary) by the bisection: every row torch's answer, across blocks of values."""
    rng = np.random.default_rng(6)
    seq = np.sort(rng.integers(-8, 8, (4, 20)), axis=-1).astype(dtype)
    seq[1] = seq[1][::-1]  # descending: not ascending
    if np.issubdtype(dtype, np.floating):
        seq[2, -1] = np.nan  # ascending but for a NaN: the bisection's answers
        seq[3, 0] = -0.0
    values = rng.integers(-10, 10, (4, 600)).astype(dtype)
    if np.issubdtype(dtype, np.floating):
        values[:, ::7] = np.nan
        values[:, 1::7] = -0.0
        values[:, 2::7] = np.inf
    for right in (0, 1):
        assert_all_paths(seq, values, right=right)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_a_short_row_starting_with_nan_is_bisected_as_torch(dtype):
    """A short row whose first boundary is NaN (the rest ascending; or the NaN alone, with no pair to
    compare it in) is not ascending: counting would skip the NaN, the bisection (torch's) does not:
    every value torch's answer (a lone NaN boundary: every value after it)."""
    values = np.array([-4, -3, -2, 0, 1, 3, 6, 10, np.inf, np.nan], dtype)
    for right in (0, 1):
        assert_all_paths(np.array([[np.nan, -3, -1, 0, 2, 5, 9], [np.nan, 1, 2, 3, 4, 5, 6]], dtype),
                         np.stack([values, values]), right=right)
        assert_all_paths(np.array([np.nan], dtype), values, right=right)
        assert_all_paths(np.array([[np.nan], [0.5], [np.nan]], dtype), np.stack([values] * 3), right=right)
        np.testing.assert_array_equal(run_session(np.array([np.nan], dtype), values, right=right), 1)


def test_large_sequence_and_many_values():
    rng = np.random.default_rng(4)
    seq = np.sort(rng.standard_normal(1_000_000).astype(np.float32))
    values = rng.standard_normal(200_000).astype(np.float32) * 1.3
    for side in ("left", "right"):
        want = np.searchsorted(seq, values, side=side)  # no NaN: numpy agrees with torch
        np.testing.assert_array_equal(run_session(seq, values, side=side), want)
        np.testing.assert_array_equal(kernels.search_sorted(seq, values, side=side), want)


@pytest.mark.parametrize("seq_shape, values_shape, sorter_shape, expect", [
    ((), (3,), None, "input sorted_sequence has shape (); expected at least 1 dimension"),
    ((2, 5), (3, 4), None, "input sorted_sequence has shape (2, 5); its leading dimensions must equal those of "
                           "values, which has shape (3, 4)"),
    ((2, 5), (), None, "input sorted_sequence has shape (2, 5); its leading dimensions"),
    ((2, 3, 5), (2, 4), None, "its leading dimensions"),
    ((5,), (3,), (4,), "input sorter has shape (4,); expected the shape of sorted_sequence, (5,)"),
])
def test_bad_shapes_are_clear_errors_and_the_session_survives(seq_shape, values_shape, sorter_shape, expect):
    names = {"sorted_sequence": (np.float32, None), "values": (np.float32, None)}
    if sorter_shape is not None:
        names["sorter"] = (np.int64, None)
    sess = session(SearchSorted, DOM, names)
    feeds = {"sorted_sequence": np.zeros(seq_shape, np.float32), "values": np.zeros(values_shape, np.float32)}
    if sorter_shape is not None:
        feeds["sorter"] = np.zeros(sorter_shape, np.int64)
    with pytest.raises(InvalidArgument) as e:
        sess.run(None, feeds)
    assert "SearchSorted (node 'n0')" in str(e.value) and expect in str(e.value)
    with pytest.raises(ValueError, match=re.escape(expect)) as e:
        kernels.search_sorted(*feeds.values())
    assert str(e.value).startswith("SearchSorted: ")


@pytest.mark.parametrize("bad", [[0, 1, 5], [0, -1, 2], [0, 3, 2]])
def test_sorter_out_of_range_is_an_error_not_a_read_out_of_bounds(bad):
    seq, values = np.array([1.0, 2.0, 3.0]), np.array([2.5])
    with pytest.raises(InvalidArgument, match=r"SearchSorted \(node 'n0'\): input sorter has an index out of "
                                              r"range \[0, 3\)"):
        run_session(seq, values, np.array(bad, np.int64))
    with pytest.raises(ValueError, match="sorter has an index out of range"):
        kernels.search_sorted(seq, values, np.array(bad, np.int64))


@pytest.mark.parametrize("attrs, expect", [
    ({"side": "middle"}, "side can only be 'left' or 'right'"),
    ({"side": "left", "right": 1}, "side and right can't be set to opposites"),
    ({"out_int32": 1}, "out_int32"),
    ({"right": 2}, "right"),
])
def test_bad_attributes_fail_at_session_creation(attrs, expect):
    model = make_model(SearchSorted, DOM, {"sorted_sequence": (np.float32, [3]), "values": (np.float32, [2])},
                       attrs=attrs)
    with pytest.raises(Exception, match=expect) as e:
        ort.InferenceSession(model.SerializeToString(), ortcustom.session_options(DOM), providers=CPU)
    assert "SearchSorted" in str(e.value)


def test_out_int32_is_refused_with_the_way_out():
    s, v = torch.arange(4.0), torch.tensor([1.5])
    with pytest.raises(ValueError, match=r"out_int32=True is not supported.*\.to\(torch\.int32\)"):
        torch.ops.ortcustom.searchsorted(s, v, True)
    with pytest.raises(ValueError, match="out_int32"):
        kernels.search_sorted(s.numpy(), v.numpy(), out_int32=1)


def test_reference_evaluator_runs_the_model():
    from onnx.reference import ReferenceEvaluator

    seq, values = np.array([[1, 3, 5], [2, 4, 6]], np.float32), np.array([[0, 3, 7], [4, 4, 1]], np.float32)
    model = make_model(SearchSorted, DOM, {"sorted_sequence": seq, "values": values}, attrs={"right": 1})
    ref = ReferenceEvaluator(model, new_ops=ortcustom.reference_ops(DOM))
    np.testing.assert_array_equal(ref.run(None, {"sorted_sequence": seq, "values": values})[0],
                                  torch_result(seq, values, right=1))
