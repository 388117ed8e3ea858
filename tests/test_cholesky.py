"""Cholesky and CholeskyEx (torch.linalg.cholesky, torch.linalg.cholesky_ex): backward error within a
small multiple of n * eps, torch's info and errors, in a session, by direct call, as a torch op, from
both exporters."""
import warnings

import numpy as np
import onnxruntime as ort
import pytest

import ortcustom
from ortcustom import kernels
from ortcustom.ops import Cholesky, CholeskyEx
from ortcustom.testing import make_model

from helpers import CPU, InvalidArgument, session

torch = pytest.importorskip("torch")
import ortcustom.torch_ops  # noqa: E402,F401

DOM = ortcustom.Domain("ortcustom").add(Cholesky, CholeskyEx)
EPS = {np.float32: np.finfo(np.float32).eps, np.float64: np.finfo(np.float64).eps}


def spd(rng, shape, dtype, cond=None):
    """Symmetric positive-definite matrices of `shape` (..., n, n); cond: their 2-norm condition."""
    n = shape[-1]
    q, _ = np.linalg.qr(rng.standard_normal(shape))
    ev = np.logspace(0, -np.log10(cond), n) if cond else rng.uniform(0.5, 2.0, shape[:-1])
    return ((q * ev[..., None, :]) @ np.swapaxes(q, -1, -2)).astype(dtype)


def run(op, a, **attrs):
    sess = session(op, DOM, {"A": (a.dtype, None)}, attrs=attrs or None)
    out = sess.run(None, {"A": a})
    return out[0] if op is Cholesky else tuple(out)


def assert_factor(a, l, upper=False):
    """Triangular, and A = L L^T (U^T U) to a backward error of a small multiple of n * eps."""
    a64, l64 = a.astype(np.float64), l.astype(np.float64)
    n = a.shape[-1]
    if n == 0:
        return
    tri = np.triu(l64) if upper else np.tril(l64)
    np.testing.assert_array_equal(l64, tri)
    rec = np.swapaxes(l64, -1, -2) @ l64 if upper else l64 @ np.swapaxes(l64, -1, -2)
    err = np.linalg.norm(rec - a64, axis=(-2, -1)) / np.linalg.norm(a64, axis=(-2, -1))
    assert (err <= 8 * n * EPS[a.dtype.type]).all(), err.max()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("upper", [0, 1])
@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (4, 4), (1000, 3, 3), (64, 4, 4), (9, 8, 8), (2, 3, 16, 16),
                                   (5, 17, 17), (3, 64, 64), (2, 65, 65), (150, 150), (2, 200, 200), (0, 3, 3),
                                   (2, 0, 0)])
def test_factors_match_torch_every_path(dtype, upper, shape):
    rng = np.random.default_rng(sum(shape) + upper)
    a = spd(rng, shape, dtype)
    a_junk = a.copy()  # the triangle not read may hold anything
    n = shape[-1]
    if n:
        junk = np.triu(np.full((n, n), 1e6), 1)
        a_junk = a_junk + (junk.T if upper else junk).astype(dtype)
    want = torch.linalg.cholesky(torch.from_numpy(a), upper=bool(upper)).numpy()
    for got in (run(Cholesky, a_junk, upper=upper), kernels.cholesky(a_junk, upper=upper),
                run(CholeskyEx, a_junk, upper=upper)[0],
                torch.ops.ortcustom.cholesky(torch.from_numpy(a_junk), upper).numpy()):
        assert got.shape == a.shape and got.dtype == a.dtype
        assert_factor(a, got, bool(upper))
        np.testing.assert_allclose(got, want, rtol=0, atol=50 * n * EPS[dtype] * max(1.0, np.abs(want).max(initial=0)))
    info = run(CholeskyEx, a, upper=upper)[1]
    assert info.dtype == np.int32 and info.shape == shape[:-2] and not info.any()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_large_and_badly_conditioned(dtype):
    rng = np.random.default_rng(3)
    for n, cond in ((600, None), (257, 1e5 if dtype == np.float32 else 1e12)):
        a = spd(rng, (n, n), dtype, cond)
        for upper in (0, 1):
            assert_factor(a, run(Cholesky, a, upper=upper), bool(upper))
            assert_factor(a, kernels.cholesky(a, upper=upper), bool(upper))


def not_pd(dtype):
    a = spd(np.random.default_rng(0), (4, 5, 5), dtype)
    a[2, 3, 3] = -50.0  # leading minor of order 4 of matrix 2
    a[3, 0, 0] = np.nan  # order 1 of matrix 3
    return a


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_info_as_torch_for_not_positive_definite_and_nan(dtype):
    a = not_pd(dtype)
    for upper in (0, 1):
        l, info = run(CholeskyEx, a, upper=upper)
        np.testing.assert_array_equal(info, torch.linalg.cholesky_ex(torch.from_numpy(a), upper=bool(upper))[1])
        np.testing.assert_array_equal(info, [0, 0, 4, 1])
        assert_factor(a[:2], l[:2], bool(upper))  # the others' factors are partial, as LAPACK's
        np.testing.assert_array_equal(kernels.cholesky_ex(a, upper=upper)[1], info)
        np.testing.assert_array_equal(CholeskyEx.reference(a, upper=upper)[1], info)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [2, 3, 8, 16, 17, 40])
def test_info_is_the_first_failed_minor_when_later_ones_fail_too(dtype, n):
    """A matrix whose leading minors fail at several orders: info is the first (as LAPACK's potrf,
    which stops there), on the small vector path (n <= 16, a lane that failed keeps its first
    info) and the recursive one, alone and among good matrices of a batch."""
    rng = np.random.default_rng(n)
    a = spd(rng, (5, n, n), dtype)
    a[1, 0, 0] = -1.0  # orders 1 and n
    a[1, n - 1, n - 1] = -1.0
    a[2, n // 2, n // 2] = np.nan  # then order n negative
    a[2, n - 1, n - 1] = -2.0
    a[3] = -np.eye(n, dtype=dtype)  # every order fails
    want = [0, 1, n // 2 + 1, 1, 0]
    for upper in (0, 1):
        np.testing.assert_array_equal(torch.linalg.cholesky_ex(torch.from_numpy(a), upper=bool(upper))[1], want)
        np.testing.assert_array_equal(run(CholeskyEx, a, upper=upper)[1], want)
        np.testing.assert_array_equal(kernels.cholesky_ex(a, upper=upper)[1], want)
        np.testing.assert_array_equal([kernels.cholesky_ex(x, upper=upper)[1] for x in a], want)  # alone


def test_not_positive_definite_is_an_error_naming_op_node_and_batch_index():
    a = not_pd(np.float64)
    sess = session(Cholesky, DOM, {"A": (np.float64, None)})
    with pytest.raises(InvalidArgument, match=r"Cholesky \(node 'n0'\): input A: the matrix at batch index 2 is not "
                                              r"positive-definite \(its leading minor of order 4"):
        sess.run(None, {"A": a})
    with pytest.raises(ValueError, match="Cholesky: input A: the matrix at batch index 2 is not positive-definite"):
        kernels.cholesky(a)
    with pytest.raises(ValueError, match="batch index 2"):
        torch.ops.ortcustom.cholesky(torch.from_numpy(a), 0)
    np.testing.assert_array_equal(sess.run(None, {"A": a[:2]})[0], kernels.cholesky(a[:2]))  # the session survives


@pytest.mark.parametrize("shape", [(3,), (2, 3), (4, 2, 3), ()])
def test_bad_shapes_are_clear_errors(shape):
    for op in (Cholesky, CholeskyEx):
        sess = session(op, DOM, {"A": (np.float32, None)})
        with pytest.raises(InvalidArgument, match=rf"{op.name} \(node 'n0'\): input A has shape .*\(\.\.\., N, N\)"):
            sess.run(None, {"A": np.ones(shape, np.float32)})


def test_info_shape_inferred_and_only_info_used():
    model = make_model(CholeskyEx, DOM, {"A": (np.float64, ["b", 3, 3])})
    for o in model.graph.output:
        o.type.tensor_type.ClearField("shape")
    sess = ort.InferenceSession(model.SerializeToString(), ortcustom.session_options(DOM), providers=CPU)
    assert sess.get_outputs()[1].shape == ["b"]
    a = not_pd(np.float64)[:, :3, :3]
    np.testing.assert_array_equal(sess.run(["info"], {"A": a})[0], [0, 0, 0, 1])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("upper", [0, 1])
def test_results_do_not_depend_on_the_thread_count_or_the_batch(dtype, upper):
    """Bitwise: 1, 2 and 3 threads; a matrix alone (its factorization split across tasks, or a lane of
    a vector of small ones padded with identities) and among others (one task each, every lane used)."""
    rng = np.random.default_rng(9)
    cases = [spd(rng, (37, 8, 8), dtype), spd(rng, (5, 16, 16), dtype), spd(rng, (5, 100, 100), dtype),
             spd(rng, (1, 333, 333), dtype)]
    got = []
    try:
        for t in (1, 2, 3):
            kernels.set_threads(t)
            got.append([kernels.cholesky(a, upper=upper) for a in cases])
            got[-1] += [kernels.cholesky(a[-1], upper=upper) for a in cases[:3]]
    finally:
        kernels.set_threads(None)
    for other in got[1:]:
        for x, y in zip(other, got[0]):
            np.testing.assert_array_equal(x, y)
    for a, alone, together in zip(cases, got[0][4:], got[0][:3]):
        np.testing.assert_array_equal(alone, together[-1])
        assert_factor(a, together, bool(upper))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [40, 100, 300])
def test_info_and_partial_factor_of_larger_matrices(dtype, n):
    """The recursive path: info is the first failed minor's order wherever it falls (a leaf on the left
    or the right of a split, NaN below the diagonal), and the leading block before it is factored."""
    rng = np.random.default_rng(n)
    a = spd(rng, (4, n, n), dtype)
    k = n // 2 + 3  # order of the failing minor of matrix 1, in the right half
    a[1, k - 1, k - 1] = -1.0
    a[2, 5, 5] = -1.0  # order 6, in the first leaf
    a[3, n - 1, 2] = a[3, 2, n - 1] = np.nan  # L[n-1, 2] is NaN: the last minor fails
    want_info = [0, k, 6, n]
    for upper in (0, 1):
        l, info = kernels.cholesky_ex(a, upper=upper)
        np.testing.assert_array_equal(info, want_info)
        np.testing.assert_array_equal(info, torch.linalg.cholesky_ex(torch.from_numpy(a), upper=bool(upper))[1])
        np.testing.assert_array_equal(run(CholeskyEx, a, upper=upper)[1], want_info)
        np.testing.assert_array_equal([kernels.cholesky_ex(x, upper=upper)[1] for x in a], want_info)  # alone
        assert_factor(a[0], l[0], bool(upper))
        for b in (1, 2, 3):
            m = want_info[b] - 1
            assert_factor(a[b, :m, :m], l[b, :m, :m], bool(upper))
