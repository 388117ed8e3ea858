"""Svd and Svdvals (torch.linalg.svd, torch.linalg.svdvals): reconstruction and orthogonality to a small
multiple of max(M, N) * eps, singular values as numpy's (descending, non-negative) to a small multiple of
eps times the largest, torch's shapes and errors, in a session, by direct call and as a torch op (the
OpInfo samples and exporters: test_svd_paths.py)."""
import numpy as np
import pytest

import ortcustom
from ortcustom import kernels
from ortcustom.ops import Svd, Svdvals

from helpers import InvalidArgument, session

torch = pytest.importorskip("torch")
import ortcustom.torch_ops  # noqa: E402,F401

DOM = ortcustom.Domain("ortcustom").add(Svd, Svdvals)
EPS = {np.float32: np.finfo(np.float32).eps, np.float64: np.finfo(np.float64).eps}


def run(op, a, **attrs):
    sess = session(op, DOM, {"A": (a.dtype, None)}, attrs=attrs or None)
    out = sess.run(None, {"A": a})
    return out[0] if op is Svdvals else tuple(out)


def with_singular_values(rng, shape, s):
    """Matrices of `shape` (..., m, n) with the singular values s (k of them), random singular vectors."""
    m, n = shape[-2:]
    u, _ = np.linalg.qr(rng.standard_normal(shape[:-2] + (m, m)))
    v, _ = np.linalg.qr(rng.standard_normal(shape[:-2] + (n, n)))
    k = min(m, n)
    return (u[..., :, :k] * s) @ np.swapaxes(v[..., :, :k], -1, -2)


def assert_svd(a, u, s, vh, full, c=4.0):
    """torch's shapes and dtype; S descending, non-negative, numpy's to c k eps |S|max; U and Vh orthonormal and
    U diag(S) Vh = A to c max(m, n) eps (norm-wise)."""
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    assert u.shape == batch + (m, m if full else k) and s.shape == batch + (k,)
    assert vh.shape == batch + (n if full else k, n)
    assert u.dtype == s.dtype == vh.dtype == a.dtype
    eps = EPS[a.dtype.type]
    if k == 0:
        np.testing.assert_array_equal(u, np.broadcast_to(np.eye(m, u.shape[-1]), u.shape))
        np.testing.assert_array_equal(vh, np.broadcast_to(np.eye(vh.shape[-2], n), vh.shape))
        return
    a64, u64, s64, vh64 = (x.astype(np.float64) for x in (a, u, s, vh))
    assert (s64 >= 0).all() and (np.diff(s64, axis=-1) <= 0).all()
    want = np.linalg.svd(a64, compute_uv=False)
    top = want[..., :1]
    assert (np.abs(s64 - want) <= c * k * eps * np.maximum(top, np.finfo(np.float64).tiny)).all(), \
        np.abs(s64 - want).max()
    for q in (np.swapaxes(u64, -1, -2) @ u64, vh64 @ np.swapaxes(vh64, -1, -2)):
        off = np.abs(q - np.eye(q.shape[-1])).max(initial=0)
        assert off <= c * max(m, n) * eps, off
    rec = (u64[..., :, :k] * s64[..., None, :]) @ vh64[..., :k, :]
    norm = np.linalg.norm(a64, axis=(-2, -1))
    err = np.linalg.norm(rec - a64, axis=(-2, -1))
    assert (err <= c * max(m, n) * eps * norm).all(), (err / np.maximum(norm, 1e-300)).max()


BIDIAG_DC_K = 64  # svd_bidiag.inc's kBidiagDcK: from it the vectors (and their values) by divide and conquer


def assert_same_values(a, vals, s, c=4.0):
    """Svdvals' values and Svd's: the same bits below BIDIAG_VALUES_K (both by Jacobi), from it Svdvals' by
    dqds and Svd's by the bidiagonal QR or the divide and conquer (both within c k eps |A| of numpy's)."""
    if min(a.shape[-2:]) < BIDIAG_VALUES_K:
        np.testing.assert_array_equal(vals, s)
    elif a.size:
        assert_values(a, vals, c)
        assert_values(a, s, c)


SHAPES = [(1, 1), (3, 3), (4, 4), (1000, 3, 3), (64, 4, 4), (9, 8, 8), (2, 3, 5, 5), (7, 3), (3, 7), (4, 2, 9),
          (5, 9, 2), (1, 6), (6, 1), (3, 17, 17), (2, 65, 40), (40, 65), (130, 130), (2, 100, 100), (0, 3, 3),
          (2, 0, 0), (2, 0, 3), (3, 0), (0, 4, 2)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES)
def test_svd_every_path(dtype, shape):
    a = np.random.default_rng(sum(shape)).standard_normal(shape).astype(dtype)
    for full in (1, 0):
        got = [run(Svd, a, full_matrices=full), kernels.svd(a, full_matrices=full),
               tuple(t.numpy() for t in torch.ops.ortcustom.svd(torch.from_numpy(a), full))]
        for u, s, vh in got:
            assert_svd(a, u, s, vh, full)
        want = [t.numpy() for t in torch.linalg.svd(torch.from_numpy(a), full_matrices=bool(full))]
        assert [x.shape for x in got[0]] == [x.shape for x in want]  # torch's shapes, empty ones included
    for s in (run(Svdvals, a), kernels.svdvals(a), torch.ops.ortcustom.svdvals(torch.from_numpy(a)).numpy()):
        assert_same_values(a, s, got[0][1])  # the values without the vectors formed
    if a.size:  # the reference is numpy's
        np.testing.assert_allclose(Svdvals.reference(a), got[0][1], rtol=0,
                                   atol=8 * max(shape[-2:]) * EPS[dtype] * np.abs(got[0][1]).max())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(8, 8), (60, 60), (40, 25), (25, 40), (200, 200)])
def test_rank_deficient(dtype, shape):
    """Zero singular values: S's zeros to eps of the largest, and the bases still complete and orthonormal
    (their vectors of the zero values, and full_matrices' extra ones, an orthonormal completion)."""
    rng = np.random.default_rng(shape[0])
    k = min(shape)
    s = np.zeros(k)
    s[: k // 3] = rng.uniform(1, 3, k // 3)
    a = with_singular_values(rng, shape, s).astype(dtype)
    for full in (1, 0):
        u, got, vh = run(Svd, a, full_matrices=full)
        assert_svd(a, u, got, vh, full)
        assert (got[k // 3:] <= 4 * k * EPS[dtype] * got[0]).all()
    z = np.zeros(shape, dtype)  # all zero: S = 0, U and Vh orthonormal still
    u, got, vh = run(Svd, z, full_matrices=1)
    assert_svd(z, u, got, vh, 1)
    assert not got.any()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("k", [4, 20, 70])
def test_a_matrix_of_subnormal_entries_is_scaled_not_overflowed(dtype, k):
    """The largest entry subnormal: its power-of-two scaling 2^-e is past the dtype's range (it was taken as inf and
    every value came out inf). Jacobi (k < 8), the bidiagonal QR and divide and conquer: torch's values, U and Vh
    orthonormal."""
    rng = np.random.default_rng(k)
    for scale in (np.finfo(dtype).tiny / 64, np.finfo(dtype).smallest_subnormal * 1000):
        a = (rng.standard_normal((2, k + 3, k)) * scale).astype(dtype)
        want = torch.linalg.svdvals(torch.from_numpy(a)).numpy()
        got = [kernels.svdvals(a), kernels.svd(a, full_matrices=0)[1]]
        for s in got:
            assert np.isfinite(s).all() and s.max() > 0
            np.testing.assert_allclose(s, want, rtol=0, atol=1e-2 * want.max())
        u, _, vh = kernels.svd(a, full_matrices=0)
        np.testing.assert_allclose(np.swapaxes(u, -1, -2) @ u, np.broadcast_to(np.eye(k), (2, k, k)), atol=1e-4)
        np.testing.assert_allclose(vh @ np.swapaxes(vh, -1, -2), np.broadcast_to(np.eye(k), (2, k, k)), atol=1e-4)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_large_badly_conditioned_and_scaled(dtype):
    """Singular values spread over cond (1e6 float, 1e14 double): each to eps of the largest, the factors
    backward stable; entries near the overflow and underflow thresholds are scaled, not squared."""
    rng = np.random.default_rng(7)
    cond = 1e6 if dtype == np.float32 else 1e14
    for shape in ((300, 300), (2, 90, 70)):
        k = min(shape[-2:])
        a = with_singular_values(rng, shape, np.logspace(0, -np.log10(cond), k)).astype(dtype)
        u, s, vh = run(Svd, a, full_matrices=0)
        assert_svd(a, u, s, vh, 0)
    big = np.finfo(dtype).max / 8
    tiny = np.finfo(dtype).tiny * 1024
    for scale in (big, tiny):
        a = rng.standard_normal((3, 6, 5))
        a = (a / np.abs(a).max() * scale).astype(dtype)
        u, s, vh = kernels.svd(a, full_matrices=1)
        assert np.isfinite(s).all() and s.max() > 0
        np.testing.assert_allclose(s / scale, np.linalg.svd(a.astype(np.float64) / scale, compute_uv=False),
                                   rtol=1e-3)


def test_repeated_singular_values():
    """The identity, and matrices with repeated values: U and Vh any orthonormal bases with U S Vh = A."""
    for a in (np.eye(6), np.diag([3.0, 3.0, 1.0, 1.0]), np.ones((5, 5)), -np.eye(4)[:, ::-1]):
        u, s, vh = run(Svd, a, full_matrices=1)
        assert_svd(a, u, s, vh, 1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nan_and_inf_are_errors_naming_op_node_and_batch_index(dtype):
    a = np.random.default_rng(0).standard_normal((4, 3, 5)).astype(dtype)
    a[2, 1, 1] = np.nan
    a[3, 0, 0] = np.inf
    for op in (Svd, Svdvals):
        sess = session(op, DOM, {"A": (a.dtype, None)})
        with pytest.raises(InvalidArgument, match=rf"{op.name} \(node 'n0'\): input A: the matrix at batch index 2 "
                                                  r"holds a NaN or an infinity"):
            sess.run(None, {"A": a})
        got = sess.run(None, {"A": a[:2]})[1 if op is Svd else 0]  # the session survives
        np.testing.assert_array_equal(got, kernels.svdvals(a[:2]))
        with pytest.raises(ValueError, match=rf"{op.name}: .*batch index 2 holds a NaN"):
            op.reference(a)
    b = a[3:]
    with pytest.raises(ValueError, match=r"Svd: input A: the matrix at batch index 0 holds a NaN or an infinity"):
        kernels.svd(b)
    with pytest.raises(ValueError, match="batch index 2"):
        torch.ops.ortcustom.svdvals(torch.from_numpy(a))
    with pytest.raises(Exception, match="non-finite"):  # torch raises too
        torch.linalg.svdvals(torch.from_numpy(a))


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (7, 7), (12, 9), (9, 12)])
def test_a_nan_or_an_inf_in_the_last_entry_is_an_error(shape):
    """Every entry is checked, the last one too: Jacobi (k < 8) and bidiagonal paths, wide and tall."""
    a = np.random.default_rng(3).standard_normal((3,) + shape)
    a[1, -1, -1] = np.nan
    a[2, -1, -1] = np.inf
    for op in (Svd, Svdvals):
        sess = session(op, DOM, {"A": (a.dtype, None)})
        with pytest.raises(InvalidArgument, match=r"the matrix at batch index 1 holds a NaN or an infinity"):
            sess.run(None, {"A": a})
        with pytest.raises(InvalidArgument, match=r"the matrix at batch index 0 holds a NaN or an infinity"):
            sess.run(None, {"A": a[2:]})
    with pytest.raises(ValueError, match=r"Svdvals: input A: the matrix at batch index 1 holds a NaN"):
        kernels.svdvals(a[:2])
    with pytest.raises(ValueError, match=r"Svd: input A: the matrix at batch index 0 holds a NaN"):
        kernels.svd(a[2])


@pytest.mark.parametrize("shape", [(3,), ()])
def test_bad_shapes_are_clear_errors(shape):
    for op in (Svd, Svdvals):
        sess = session(op, DOM, {"A": (np.float32, None)})
        with pytest.raises(InvalidArgument, match=rf"{op.name} \(node 'n0'\): input A has shape .*\(\.\.\., M, N\)"):
            sess.run(None, {"A": np.ones(shape, np.float32)})


def test_only_some_outputs_used():
    """A node that uses S alone, or U alone: what it uses is the full result's."""
    from ortcustom.testing import make_model
    import onnxruntime as ort
    from helpers import CPU

    a = np.random.default_rng(3).standard_normal((5, 6, 4))
    model = make_model(Svd, DOM, {"A": (np.float64, ["b", 6, 4])}, attrs={"full_matrices": 0})
    sess = ort.InferenceSession(model.SerializeToString(), ortcustom.session_options(DOM), providers=CPU)
    assert [o.shape for o in sess.get_outputs()] == [["b", 6, 4], ["b", 4], ["b", 4, 4]]
    u, s, vh = kernels.svd(a, full_matrices=0)
    np.testing.assert_array_equal(sess.run(["S"], {"A": a})[0], s)
    np.testing.assert_array_equal(sess.run(["U"], {"A": a})[0], u)


# ---- the bidiagonal path (svd_bidiag.inc: k = min(M, N) >= kBidiagK, kBidiagValuesK for S alone; Jacobi below)
BIDIAG_K, BIDIAG_VALUES_K = 8, 5  # svd.cpp's kBidiagK, kBidiagValuesK


def assert_values(a, got, c=4.0):
    """S as numpy's to c k eps |A| (each value, absolute), descending and non-negative."""
    want = np.linalg.svd(a.astype(np.float64), compute_uv=False)
    k = want.shape[-1]
    assert (got >= 0).all() and (np.diff(got.astype(np.float64), axis=-1) <= 0).all()
    err = np.abs(got.astype(np.float64) - want).max()
    assert err <= c * k * EPS[a.dtype.type] * max(want.max(initial=0), 1e-300), err


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("k", sorted({BIDIAG_VALUES_K - 1, BIDIAG_VALUES_K, BIDIAG_K - 1, BIDIAG_K, BIDIAG_K + 1, 31, 64}))
@pytest.mark.parametrize("extra", [0, 1, 23])
def test_both_sides_of_the_crossover_tall_wide_and_square(dtype, k, extra):
    rng = np.random.default_rng(100 * k + extra)
    for shape in {(3, k, k + extra), (3, k + extra, k)}:
        a = rng.standard_normal(shape).astype(dtype)
        for full in (1, 0):
            u, s, vh = kernels.svd(a, full_matrices=full)
            assert_svd(a, u, s, vh, full)
        vals = kernels.svdvals(a)
        if BIDIAG_VALUES_K <= k < BIDIAG_K:  # bidiagonal without the vectors, Jacobi with them
            assert_values(a, vals)
        else:
            assert_same_values(a, vals, s)  # the same path: the same values without the vectors (below D&C)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(2, 300, 40), (2, 40, 300), (65, 40), (40, 65), (3, 2000, 6), (500, 250)])
def test_svdvals_of_a_long_matrix_go_through_its_r(dtype, shape):
    """From L >= 1.5 k (k >= 32; 8 k below) S alone comes from A's R (A^T's when wide: svd.cpp's values_by_r):
    numpy's values, Svd's (the bidiagonalization of A itself) within the bound, each matrix's the same bits
    alone as in a batch, on 1 and 2 threads; scaled near overflow and underflow (R's norms neither overflow nor
    underflow); a NaN or inf is an error naming its batch index."""
    rng = np.random.default_rng(sum(shape))
    a = rng.standard_normal(shape).astype(dtype)
    s = kernels.svdvals(a)
    assert_values(a, s)
    assert_same_values(a, s, kernels.svd(a, full_matrices=0)[1])
    batch = a.reshape((-1,) + shape[-2:])
    try:
        for t in (1, 2):
            kernels.set_threads(t)
            alone = np.stack([kernels.svdvals(m) for m in batch])
            np.testing.assert_array_equal(alone, s.reshape(alone.shape))
            np.testing.assert_array_equal(kernels.svdvals(np.stack([batch[-1]] * 5))[3], alone[-1])  # tasks over 5
    finally:
        kernels.set_threads(None)
    for scale in (np.finfo(dtype).max / 8 / max(shape[-2:]), np.finfo(dtype).tiny / 64):  # values below max
        b = (batch[:1] / np.abs(batch[:1]).max() * scale).astype(dtype)
        want = torch.linalg.svdvals(torch.from_numpy(b.astype(np.float64))).numpy()
        np.testing.assert_allclose(kernels.svdvals(b), want, rtol=0, atol=1e-2 * want.max())
    bad = np.stack([batch[0]] * 3)
    bad[1, -1, -1] = np.nan
    with pytest.raises(InvalidArgument, match=r"the matrix at batch index 1 holds a NaN or an infinity"):
        run(Svdvals, bad)


def lower_bidiagonal(rng, n, decades, dtype):
    """A lower bidiagonal n x n matrix, entries of random signs and magnitudes over `decades` decades: its
    Householder reduction is exact (every reflector is the identity), so its values are the bidiagonal's."""
    d, e = (rng.uniform(0.5, 2, k) * 10.0 ** rng.uniform(-decades, 0, k) * rng.choice([-1, 1], k)
            for k in (n, n - 1))
    return (np.diag(d) + np.diag(e, -1)).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_svdvals_of_a_graded_bidiagonal_are_relatively_accurate(dtype):
    """dqds (Svdvals from k = BIDIAG_VALUES_K) keeps the high relative accuracy of a bidiagonal's values, down
    to the smallest: each within 2 n eps of its own size of torch's float64 svdvals (LAPACK's gesdd: the
    reduction of an upper bidiagonal is exact there too, and its values agreed with 60-digit mpmath to
    1 ulp). A float64 one whose smallest value may be below ~1e-140 of the largest takes the QR (the squares
    would leave double's range): checked as any matrix. (A split of the qd array where f <= tol^2 q, not
    tol^2 sigma, lost the small values here.)"""
    import torch

    rng = np.random.default_rng(11)
    eps = EPS[dtype]
    for n in (BIDIAG_VALUES_K, 6, 7, 9, 17, 40, 64, 100):
        for decades in (0, 3, 10, 20):
            b = lower_bidiagonal(rng, n, decades, dtype)
            want = torch.linalg.svdvals(torch.from_numpy(b.T.astype(np.float64))).numpy()
            got = kernels.svdvals(b).astype(np.float64)
            normal = want >= np.finfo(dtype).tiny / eps  # float32's outputs below its normal range round
            rel = np.abs(got - want)[normal] / want[normal]
            assert rel.max() <= 2 * n * eps, (n, decades, rel.max() / eps)
            assert not np.signbit(got).any()
        if dtype == np.float64:
            b = lower_bidiagonal(rng, n, 145, dtype)
            assert_values(b, kernels.svdvals(b))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [BIDIAG_VALUES_K, 9, 64])
def test_svdvals_of_a_batch_are_each_matrix_alone(dtype, n):
    """A batch's matrices go in pairs, their dqds side by side (tasks of whole pairs from 32 matrices): each
    matrix's values are the same bits as alone, with graded bidiagonals, a zero column, a float64 matrix
    that dqds does not take (the QR instead) beside one it takes, and an odd one out; a NaN is still an
    error naming its batch index."""
    rng = np.random.default_rng(n)
    a = rng.standard_normal((35, n, n)).astype(dtype)
    for i, decades in ((1, 10), (2, 20), (5, 3)):
        a[i] = lower_bidiagonal(rng, n, decades, dtype)
    a[3, :, 1] = 0
    if dtype == np.float64:  # first and second of their pairs
        a[6] = lower_bidiagonal(rng, n, 145, dtype)
        a[9] = lower_bidiagonal(rng, n, 145, dtype)
    got = kernels.svdvals(a)
    for i in range(35):
        np.testing.assert_array_equal(got[i], kernels.svdvals(a[i]))
    assert_values(a, got)
    a[20, 1, 1] = np.nan
    with pytest.raises(ValueError, match="batch index 20"):
        kernels.svdvals(a)


def graded(rng, shape, decades):
    """D1 X D2, D1 and D2 diagonal scalings over `decades` decades each (a graded matrix)."""
    m, n = shape
    return np.logspace(0, -decades, m)[:, None] * rng.standard_normal(shape) * np.logspace(0, -decades, n)[::-1]


def assert_each_factored(cases, dtype):
    """Each matrix's svd (full and reduced) and svdvals pass the reconstruction and orthogonality checks."""
    for a in cases:
        a = np.ascontiguousarray(a, dtype=dtype)
        for full in (1, 0):
            u, s, vh = kernels.svd(a, full_matrices=full)
            assert_svd(a, u, s, vh, full)
        assert_values(a, kernels.svdvals(a))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(40, 40), (57, 33), (33, 57)])
def test_graded_and_structured_matrices(dtype, shape):
    """Graded rows and columns, already bidiagonal or diagonal (unsorted, signed), zero rows and columns in the
    middle (exact zeros on the bidiagonal: the zero-shift sweeps), repeated and clustered values, 2 x 2 blocks."""
    rng = np.random.default_rng(shape[0] * shape[1])
    m, n = shape
    k = min(m, n)
    cases = [graded(rng, shape, 6 if dtype == np.float32 else 12), graded(rng, shape, 3)[::-1, ::-1]]
    b = np.zeros(shape)
    b[np.arange(k), np.arange(k)] = rng.standard_normal(k)
    b[np.arange(k - 1), np.arange(1, k)] = rng.standard_normal(k - 1)
    cases.append(b.copy())  # upper bidiagonal
    b[::3, :] = 0  # every third row zero: zero diagonal entries
    cases.append(b.copy())
    cases.append(b.T.copy()[:m, :n] if m == n else b[::-1].copy())  # lower, reversed
    diag = np.zeros(shape)
    diag[np.arange(k), np.arange(k)] = rng.permutation(np.r_[-5.0, 5.0, 1e-3, -1e-3, 0.0, rng.standard_normal(k - 5)])
    cases.append(diag)
    cases.append(with_singular_values(rng, shape, np.repeat([3.0, 1.0, 1e-4, 0.0], -(-k // 4))[:k]))
    cases.append(with_singular_values(rng, shape, 1 + 1e-7 * rng.standard_normal(k)))  # a tight cluster
    blocks = np.zeros(shape)
    for i in range(0, k - 1, 2):
        blocks[i:i + 2, i:i + 2] = rng.standard_normal((2, 2))
    cases.append(blocks)
    z = rng.standard_normal(shape)
    z[:, n // 2] = 0
    z[m // 3, :] = 0
    cases.append(z)
    assert_each_factored(cases, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_large_single_matrices_do_not_depend_on_the_thread_count(dtype):
    """One large matrix is split across tasks inside (the bidiagonalization, the rotations, the reflectors):
    the same bits on 1, 2 and 3 threads."""
    rng = np.random.default_rng(9)
    got = []
    try:
        for shape in ((150, 130), (130, 150)):
            a = rng.standard_normal(shape).astype(dtype)
            res = []
            for t in (1, 2, 3):
                kernels.set_threads(t)
                res.append(kernels.svd(a, full_matrices=1) + (kernels.svdvals(a),))
            got.append((a, res))
    finally:
        kernels.set_threads(None)
    for a, res in got:
        for r in res[1:]:
            for x, y in zip(r, res[0]):
                np.testing.assert_array_equal(x, y)
        assert_svd(a, *res[0][:3], 1)


# ---- the back-transforms in blocks of reflectors (svd_bidiag.inc's reflect_blocked, from kBlockedReflectors of
# them; NB = the product's tile height: 32/16 float/double on AVX-512, 16/8 AVX2, 8/4 baseline) and the rotation
# queues reordered in waves
BLOCKED_REFLECTORS = 64  # svd_bidiag.inc's kBlockedReflectors


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("k", sorted({BLOCKED_REFLECTORS - 1, BLOCKED_REFLECTORS, BLOCKED_REFLECTORS + 1,
                                      BLOCKED_REFLECTORS + 2, 95, 96, 97, 129}))
def test_blocked_reflectors_on_both_sides_of_their_threshold(dtype, k):
    """Short side k - 2 reflectors, long side k: both sides of the blocked threshold and of whole blocks, tall and
    wide (full bases: the reflectors applied to the completion's unit vectors too)."""
    rng = np.random.default_rng(k)
    for shape in {(2, k, k), (2, k + 19, k), (2, k, k + 19), (1, 3 * k, k)}:
        a = rng.standard_normal(shape).astype(dtype)
        for full in (1, 0):
            u, s, vh = kernels.svd(a, full_matrices=full)
            assert_svd(a, u, s, vh, full)
        assert_same_values(a, kernels.svdvals(a), s)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(160, 160), (200, 90), (90, 200)])
def test_large_structured_matrices(dtype, shape):
    """Large enough for several blocks of reflectors and long rotation waves: repeated values, a tight cluster, rank
    deficiency, grading, a zero matrix, an upper bidiagonal with zero diagonal entries."""
    rng = np.random.default_rng(sum(shape))
    k = min(shape)
    cases = [with_singular_values(rng, shape, np.repeat([3.0, 1.0, 1e-4, 0.0], -(-k // 4))[:k]),
             with_singular_values(rng, shape, 1 + 1e-6 * rng.standard_normal(k)),
             with_singular_values(rng, shape, np.r_[rng.uniform(1, 2, k // 2), np.zeros(k - k // 2)]),
             graded(rng, shape, 5 if dtype == np.float32 else 10), np.zeros(shape)]
    b = np.zeros(shape)
    b[np.arange(k), np.arange(k)] = rng.standard_normal(k)
    b[np.arange(k - 1), np.arange(1, k)] = rng.standard_normal(k - 1)
    b[::7, :] = 0
    cases.append(b)
    assert_each_factored(cases, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_batches_and_single_matrices_do_not_depend_on_the_thread_count(dtype):
    """The blocked reflectors split the rows across tasks, the waves the columns: the same bits on 1, 2 and 3
    threads, one large matrix (split inside) and a batch (split over matrices)."""
    rng = np.random.default_rng(11)
    cases = [rng.standard_normal(s).astype(dtype) for s in ((300, 260), (260, 300), (6, 70, 70))]
    same_bits_on_1_2_3_threads(lambda: [kernels.svd(a, full_matrices=f) for a in cases for f in (0, 1)])


def same_bits_on_1_2_3_threads(run):
    """run()'s arrays (a list of tuples) on 1, 2 and 3 threads, asserted bit-identical; returns the 1-thread ones."""
    try:
        res = []
        for t in (1, 2, 3):
            kernels.set_threads(t)
            res.append(run())
    finally:
        kernels.set_threads(None)
    for r in res[1:]:
        for got, want in zip(r, res[0]):
            for x, y in zip(got, want):
                np.testing.assert_array_equal(x, y)
    return res[0]


# ---- the blocked reduction (svd_bidiag_blocked.inc: panels of kBidiagNB = 16, from k = kBlockedBidiagK float elements'
# worth: 288 float, 144 double)
BLOCKED_BIDIAG = {np.float32: 288, np.float64: 144}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_blocked_bidiagonalization_on_both_sides_of_its_threshold(dtype):
    """k just below the threshold and from it (a last panel of 16, 1 and 2 columns), square, tall and wide; the
    values alone the same bits as with the vectors; one matrix split inside on 1, 2 and 3 threads, the same bits."""
    t = BLOCKED_BIDIAG[dtype]
    rng = np.random.default_rng(t)
    for k in (t - 1, t, t + 1, t + 2):
        for shape in ((k, k), (k + 19, k), (k, k + 19)):
            a = rng.standard_normal(shape).astype(dtype)
            u, s, vh = kernels.svd(a, full_matrices=1)
            assert_svd(a, u, s, vh, 1)
            assert_same_values(a, kernels.svdvals(a), s)
    a = with_singular_values(rng, (t + 40, t + 1), np.logspace(0, -3, t + 1)).astype(dtype)
    try:
        res = []
        for th in (1, 2, 3):
            kernels.set_threads(th)
            res.append(kernels.svd(a, full_matrices=0) + (kernels.svdvals(a),))
    finally:
        kernels.set_threads(None)
    for r in res[1:]:
        for x, y in zip(r, res[0]):
            np.testing.assert_array_equal(x, y)
    assert_svd(a, *res[0][:3], 0)


# ---- the bidiagonal divide and conquer (svd_bidiag_dc.inc: the vectors from k = kBidiagDcK, blocks split down to
# leaves of kDcLeaf rows; the values still the QR's)
DC_LEAF = 24  # svd_bidiag_dc.inc's kDcLeaf


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("k", [BIDIAG_DC_K - 1, BIDIAG_DC_K, BIDIAG_DC_K + 1, 2 * DC_LEAF + 50, 203, 390])
def test_divide_and_conquer_on_both_sides_of_its_threshold_and_levels(dtype, k):
    """63 by the QR, from 64 by divide and conquer: two levels of merges (64, 98) to four (203, 390); square, tall
    and wide, reduced and full bases (c = 2: the bounds torch's own LAPACK meets); the values Svdvals' bits below
    the threshold, close to them from it."""
    rng = np.random.default_rng(k)
    for shape in ((k, k), (k + 23, k), (k, k + 7)):
        a = rng.standard_normal(shape).astype(dtype)
        for full in (0, 1):
            u, s, vh = kernels.svd(a, full_matrices=full)
            assert_svd(a, u, s, vh, full, c=2.0)
        assert_same_values(a, kernels.svdvals(a), s)


def dc_hard_cases(rng, shape, dtype):
    """Spectra that exercise the merges' deflation: repeated values (equal poles), clusters, a graded spectrum (1 ..
    1e-30 double, 1e-20 float: poles below the tolerance), rank deficiency (zero values), all zero; and bidiagonals
    with zero d and e entries (z entries exactly zero, split blocks)."""
    m, n = shape
    k = min(shape)
    spectra = [np.repeat([2.0, 1.0, 0.5], -(-k // 3))[:k],
               np.repeat([1.0, 1e-3, 1e-6, 1e-9], -(-k // 4))[:k] * (1 + 1e-7 * rng.standard_normal(k)),
               np.logspace(0, -30 if dtype == np.float64 else -20, k),
               np.r_[rng.uniform(0.5, 1, k - k // 3), np.zeros(k // 3)]]
    cases = [with_singular_values(rng, shape, s) for s in spectra] + [np.zeros(shape)]
    b = np.zeros(shape)
    d, e = rng.uniform(0.5, 1, k), rng.uniform(0.5, 1, k - 1)
    d[[3, k // 2, k - 1]] = 0
    e[[0, 10, k // 2, k // 2 + 1, k - 2]] = 0
    b[np.arange(k), np.arange(k)] = d
    b[np.arange(k - 1), np.arange(1, k)] = e
    cases += [b, b[::-1, ::-1].copy()]
    diag = np.zeros(shape)
    diag[np.arange(k), np.arange(k)] = rng.permutation(np.r_[np.ones(k // 2), rng.standard_normal(k - k // 2)])
    cases.append(diag)
    return cases


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(150, 150), (230, 150), (97, 333), (300, 300)])
def test_divide_and_conquer_hard_spectra(dtype, shape):
    """Each hard case's svd backward stable with orthonormal factors (to the bounds torch's own LAPACK meets: c = 2),
    its values close to Svdvals'."""
    rng = np.random.default_rng(sum(shape))
    for a in dc_hard_cases(rng, shape, dtype):
        a = np.ascontiguousarray(a, dtype=dtype)
        for full in (0, 1):
            u, s, vh = kernels.svd(a, full_matrices=full)
            assert_svd(a, u, s, vh, full, c=2.0)
        assert_same_values(a, kernels.svdvals(a), s)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_divide_and_conquer_does_not_depend_on_the_thread_count(dtype):
    """The merges' secular roots, vectors and products split across tasks: the same bits on 1, 2 and 3 threads (one
    large matrix, split inside; a batch, split over matrices), a hard spectrum included."""
    rng = np.random.default_rng(13)
    cases = [rng.standard_normal((333, 310)).astype(dtype),
             with_singular_values(rng, (310, 333), np.repeat([1.0, 1e-3, 0.0], 104)[:310]).astype(dtype),
             rng.standard_normal((5, 80, 70)).astype(dtype)]
    for a, got in zip(cases, same_bits_on_1_2_3_threads(lambda: [kernels.svd(a, full_matrices=0) for a in cases])):
        assert_svd(a, *got, 0, c=2.0)
