"""Bad inputs at run time: every case is one session, a bad run (a clear error naming the op and
the node, or a documented result), then a good run of the same session that must be right.

Complements tests/test_inverse.py, tests/test_group_norm.py and tests/test_op_api.py (which
already cover non-square/low-rank X, int32 X, bad num_groups values, scale/bias of the wrong
length, epsilon < 0, epsilon given as int, Python kernels that raise or return the wrong dtype)."""
import numpy as np
import pytest

from helpers import HUGE, session
from known_good import GOOD_INV, INV_DOM, check_group_norm_works, check_inverse_works, gn_feeds
from ortcustom.ops import Inverse


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
    # inf on the diagonal: the limit of inv([[a, 1], [1, 1]]) = [[1, -1], [-1, a]] / (a - 1) as a -> inf
    np.testing.assert_array_equal(y[3], [[0, 0], [0, 1]])
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
