"""Solve, SolveEx and Slogdet (torch.linalg.solve, solve_ex, slogdet) on one LU with partial pivoting:
backward error within a small multiple of n * eps, torch's shapes (broadcasting, vectors, left=0),
info, signs and errors, in a session, by direct call and as a torch op (test_isa.py runs this file
again under each instruction-set pass)."""
import numpy as np
import onnxruntime as ort
import pytest

import ortcustom
from ortcustom import kernels
from ortcustom.ops import Slogdet, Solve, SolveEx
from ortcustom.testing import make_model

from helpers import CPU, InvalidArgument, session

torch = pytest.importorskip("torch")
import ortcustom.torch_ops  # noqa: E402,F401

DOM = ortcustom.Domain("ortcustom").add(Solve, SolveEx, Slogdet)
EPS = {np.float32: np.finfo(np.float32).eps, np.float64: np.finfo(np.float64).eps}
SIZES = (1, 2, 3, 4, 5, 8, 9, 16, 17, 64, 65, 130, 200)  # fixed-size, unblocked (<= 64) and recursive paths


def solve_all_paths(a, b, left=1):
    """X from a session, a direct call and the torch op (all equal), and SolveEx's X."""
    sess = session(Solve, DOM, {"A": a, "B": b}, attrs={"left": left})
    got = [sess.run(None, {"A": a, "B": b})[0], kernels.solve(a, b, left=left),
           torch.ops.ortcustom.solve(torch.from_numpy(a), torch.from_numpy(b), left).numpy(),
           kernels.solve_ex(a, b, left=left)[0]]
    for g in got[1:]:
        np.testing.assert_array_equal(g, got[0])
    return got[0]


def assert_solution(a, b, x, left=1):
    """x solves a x = b (left) or x a = b, to a backward error of a small multiple of n * eps:
    |b - a x| <= c n eps (|a| |x| + |b|) in norm."""
    a64, b64, x64 = (v.astype(np.float64) for v in (a, b, x))
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])
    if vector:
        b64, x64 = b64[..., None], x64[..., None]
    prod = a64 @ x64 if left else x64 @ a64
    r = np.linalg.norm(prod - b64, axis=(-2, -1))
    scale = np.linalg.norm(a64, axis=(-2, -1)) * np.linalg.norm(x64, axis=(-2, -1)) + np.linalg.norm(b64, axis=(-2, -1))
    n = a.shape[-1]
    assert (r <= 16 * n * EPS[a.dtype.type] * scale).all(), (r / scale).max()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", SIZES)
def test_solutions_every_size_and_path(dtype, n):
    rng = np.random.default_rng(n)
    batch = (3,) if n <= 64 else ()
    a = rng.standard_normal(batch + (n, n)).astype(dtype)  # row swaps needed: not diagonally dominant
    for left in (1, 0):
        b = rng.standard_normal(batch + ((n, 3) if left else (3, n))).astype(dtype)
        x = solve_all_paths(a, b, left)
        assert x.shape == b.shape and x.dtype == dtype
        assert_solution(a, b, x, left)
        want = torch.linalg.solve(torch.from_numpy(a), torch.from_numpy(b), left=bool(left)).numpy()
        cond = np.linalg.cond(a.astype(np.float64)).max()
        np.testing.assert_allclose(x, want, rtol=0, atol=cond * 64 * n * EPS[dtype] * max(1.0, np.abs(want).max()))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("sa", "sb", "want"), [
    ((2, 4, 4), (4,), (2, 4)),               # one vector for every matrix
    ((2, 4, 4), (2, 4), (2, 4)),             # a batch of vectors: A's shape but the last
    ((2, 4, 4), (5, 1, 4, 3), (5, 2, 4, 3)),  # batch dims broadcast
    ((4, 4), (6, 4, 2), (6, 4, 2)),
    ((3, 1, 4, 4), (2, 4, 1), (3, 2, 4, 1)),
    ((2, 4, 4), (3, 4), None),               # (3, 4): neither vectors for (2, 4, 4) nor a matrix: no broadcast
])
def test_shapes_as_torch(dtype, sa, sb, want):
    rng = np.random.default_rng(1)
    a = (rng.standard_normal(sa) + 4 * np.eye(sa[-1])).astype(dtype)
    b = rng.standard_normal(sb).astype(dtype)
    if want is None:
        with pytest.raises(RuntimeError):
            torch.linalg.solve(torch.from_numpy(a), torch.from_numpy(b))
        with pytest.raises(ValueError, match="Solve: input B has shape .*incompatible|do not broadcast"):
            kernels.solve(a, b)
        return
    x = solve_all_paths(a, b)
    assert x.shape == want == tuple(torch.linalg.solve(torch.from_numpy(a), torch.from_numpy(b)).shape)
    np.testing.assert_allclose(x, torch.linalg.solve(torch.from_numpy(a), torch.from_numpy(b)).numpy(),
                               rtol=1e-4 if dtype == np.float32 else 1e-10, atol=1e-5 if dtype == np.float32 else 1e-12)
    np.testing.assert_allclose(x, Solve.reference(a, b), rtol=1e-4, atol=1e-5)


def singular(dtype):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((4, 5, 5)).astype(dtype)
    a[1] = 0.0                 # singular at step 1
    a[3, 2] = a[3, 0]         # two equal rows: one becomes exactly zero, an exact zero pivot
    return a


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_singular_is_info_in_solve_ex_and_an_error_in_solve(dtype):
    a = singular(dtype)
    b = np.ones((4, 5, 2), dtype)
    x, info = kernels.solve_ex(a, b)
    want = torch.linalg.solve_ex(torch.from_numpy(a), torch.from_numpy(b))[1].numpy()
    assert info.dtype == np.int32 and info.shape == (4,)
    np.testing.assert_array_equal(info, want)
    np.testing.assert_array_equal(info, SolveEx.reference(a, b)[1])
    assert info[0] == info[2] == 0 and info[1] == 1 and info[3] > 0
    assert_solution(a[[0, 2]], b[[0, 2]], x[[0, 2]])
    assert not np.isfinite(x[1]).all() and not np.isfinite(x[3]).all()  # getrs divides by the zero pivot
    sess = session(SolveEx, DOM, {"A": a, "B": b})
    got = sess.run(None, {"A": a, "B": b})
    np.testing.assert_array_equal(got[1], info)
    np.testing.assert_array_equal(got[0], x)
    sess = session(Solve, DOM, {"A": (dtype, None), "B": (dtype, None)})
    with pytest.raises(InvalidArgument, match=r"Solve \(node 'n0'\): input A: the matrix at batch index 1 is singular"):
        sess.run(None, {"A": a, "B": b})
    with pytest.raises(ValueError, match="Solve: input A: the matrix at batch index 1 is singular"):
        kernels.solve(a, b)
    with pytest.raises(ValueError, match="batch index 1 is singular"):
        torch.ops.ortcustom.solve(torch.from_numpy(a), torch.from_numpy(b), 1)
    ok = a[[0, 2]], b[[0, 2]]
    np.testing.assert_array_equal(sess.run(None, {"A": ok[0], "B": ok[1]})[0], kernels.solve(*ok))  # the session survives


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [6, 8, 9, 20, 64, 65, 130])
def test_info_is_the_first_zero_pivot_when_there_are_several(dtype, n):
    """Two zero columns give two exact zero pivots: info is the first (as getrf), on every path (fused
    n <= 8, unblocked, recursive), for a single matrix and for a batch of them."""
    rng = np.random.default_rng(n)
    a = (rng.standard_normal((3, n, n)) + 2 * np.eye(n)).astype(dtype)
    a[1, :, 2] = 0.0  # pivots 3 and n - 1
    a[1, :, n - 2] = 0.0
    a[2, :, n // 2] = 0.0  # pivots n // 2 + 1 and n
    a[2, :, n - 1] = 0.0
    b = rng.standard_normal((3, n, 2)).astype(dtype)
    want = [0, 3, n // 2 + 1]
    np.testing.assert_array_equal(torch.linalg.solve_ex(torch.from_numpy(a), torch.from_numpy(b))[1], want)
    np.testing.assert_array_equal(kernels.solve_ex(a, b)[1], want)
    np.testing.assert_array_equal([kernels.solve_ex(x, y)[1] for x, y in zip(a, b)], want)  # alone
    np.testing.assert_array_equal(kernels.solve_ex(a, b[:, :, 0])[1], want)  # vectors
    sess = session(Solve, DOM, {"A": (dtype, None), "B": (dtype, None)})
    with pytest.raises(InvalidArgument, match=r"batch index 1 is singular \(its pivot 3 is zero\)"):
        sess.run(None, {"A": a, "B": b})
    with pytest.raises(ValueError, match=rf"batch index 0 is singular \(its pivot {n // 2 + 1} is zero\)"):
        kernels.solve(a[2], b[2])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [6, 8, 9, 20, 64, 65, 130])
def test_x_a_equals_b_reports_the_info_of_a_itself(dtype, n):
    """X A = B (left=0): info is the first zero pivot of A's own LU, as torch's (which factors A and
    solves with its transpose, getrs 'T'), not of A^T's (zero columns 3 and n - 1 of A are zero rows of
    A^T: its first zero pivot would be n - 1). On every path (fused n <= 8, unblocked, recursive; a
    single matrix and a batch; session), and the non-singular solution still solves X A = B."""
    rng = np.random.default_rng(n + 1)
    a = (rng.standard_normal((3, n, n)) + 2 * np.eye(n)).astype(dtype)
    a[1, :, 2] = 0.0  # A's pivots 3 and n - 1
    a[1, :, n - 2] = 0.0
    a[2, :, n // 2] = 0.0  # A's pivots n // 2 + 1 and n; A^T's first would be n - 1
    a[2, :, n - 1] = 0.0
    b = rng.standard_normal((3, 4, n)).astype(dtype)
    want = torch.linalg.solve_ex(torch.from_numpy(a), torch.from_numpy(b), left=False)[1].numpy()
    np.testing.assert_array_equal(want, [0, 3, n // 2 + 1])
    x, info = kernels.solve_ex(a, b, left=0)
    np.testing.assert_array_equal(info, want)
    assert_solution(a[0], b[0], x[0], left=0)
    np.testing.assert_array_equal([kernels.solve_ex(p, q, left=0)[1] for p, q in zip(a, b)], want)  # alone
    x0 = kernels.solve(a[0], b[0], left=0)
    assert_solution(a[0], b[0], x0, left=0)
    sess = session(SolveEx, DOM, {"A": (dtype, None), "B": (dtype, None)}, attrs={"left": 0})
    xs, infos = sess.run(None, {"A": a, "B": b})
    np.testing.assert_array_equal(infos, want)
    np.testing.assert_array_equal(xs[0], x[0])
    ref_x, ref_info = SolveEx.reference(a, b, left=0)  # the NumPy reference: the same convention
    np.testing.assert_array_equal(ref_info, want)
    assert_solution(a[0], b[0], ref_x[0], left=0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_slogdet_of_more_pivots_than_doubles_exponent_range(dtype):
    """1100 pivots of mantissa 1/2 (4 I, I / 4, rows of 4 I shuffled): the mantissas' product
    (2^-1100) is below double's range unless renormalized on the way; log|det| is still 2 n ln 2
    (or its opposite), and the sign torch's."""
    n = 1100
    eye = np.eye(n, dtype=dtype)
    shuffled = 4 * eye[np.random.default_rng(0).permutation(n)]
    for a, want in ((4 * eye, 2 * n * np.log(2.0)), (eye / 4, -2 * n * np.log(2.0)), (shuffled, 2 * n * np.log(2.0))):
        t = torch.linalg.slogdet(torch.from_numpy(a))
        sign, logabs = kernels.slogdet(a)
        assert sign == t.sign.item() and np.isclose(logabs, want, rtol=1e-6), (sign, logabs, want)
        s2, l2 = session(Slogdet, DOM, {"A": a[None]}).run(None, {"A": a[None]})
        assert s2[0] == sign and np.isclose(l2[0], want, rtol=1e-6), (s2, l2, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [3, 8, 17, 130])
def test_slogdet_as_torch(dtype, n):
    rng = np.random.default_rng(n)
    a = rng.standard_normal((6, n, n)).astype(dtype)
    a[1] *= 1e3 if dtype == np.float64 else 10  # a determinant far from 1
    if n >= 8:
        a[2, :, 1] = a[2, :, 4]  # two equal columns: singular, an exact zero pivot of A^T's LU
    ws, wl = (t.numpy() for t in torch.linalg.slogdet(torch.from_numpy(a)))
    sess = session(Slogdet, DOM, {"A": a})
    for sign, logabs in (sess.run(None, {"A": a}), kernels.slogdet(a),
                         tuple(t.numpy() for t in torch.ops.ortcustom.slogdet(torch.from_numpy(a))),
                         Slogdet.reference(a)):
        assert sign.shape == logabs.shape == (6,) and sign.dtype == logabs.dtype == dtype
        ok = np.arange(6) != 2 if n >= 8 else np.ones(6, bool)
        np.testing.assert_array_equal(sign[ok], ws[ok])
        np.testing.assert_allclose(logabs[ok], wl[ok], rtol=0, atol=n * 200 * EPS[dtype] * max(1, np.abs(wl[ok]).max()))
        if n >= 8:  # an exact zero pivot (MKL's blocked LU may round it to a tiny one instead)
            assert sign[2] == 0 and logabs[2] == -np.inf


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [9, 39, 40, 55, 56, 64])
def test_a_batch_factors_each_matrix_as_a_single_solve_does(dtype, n):
    """A batch of mid-size matrices is factored in a padded copy with its pivot column kept contiguous
    (from n = 40 float, 56 double); a single matrix's Solve factors in place. Both take getrf's
    pivots (the first of equal largest magnitudes, NaN never winning, a zero pivot skipped and the
    search going on in the next column): the same bits, with ties in every column, a NaN, a zero
    column (the X then as computed, info its pivot) and a zero column but for a NaN (the zero is the
    pivot: info 1)."""
    rng = np.random.default_rng(n)
    a = (rng.integers(-3, 4, (6, n, n)) + 8 * np.eye(n)).astype(dtype)
    a[2, 5, 1] = np.nan
    a[3, :, 2] = 0
    a[4] = rng.standard_normal((n, n))
    a[5, :, 0] = 0
    a[5, 3, 0] = np.nan
    b = rng.standard_normal((6, n, 2)).astype(dtype)
    x, info = kernels.solve_ex(a, b)
    np.testing.assert_array_equal(info, [0, 0, 0, 3, 0, 1])
    for i in range(6):
        np.testing.assert_array_equal(x[i], kernels.solve_ex(a[i], b[i])[0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", range(1, 9))
def test_solve_of_a_batch_is_each_matrix_alone_and_torch(dtype, n):
    """n <= 8 (A X = B) factors and solves a vector's width of matrices at once, one per lane (the rest one by one):
    37 matrices, each lane its own pivots, row swaps, zero pivots (info) and NaN/inf, and the columns of B each
    its lane's. Each matrix's X and info are its own as alone (the same bits), torch's where A is regular."""
    rng = np.random.default_rng(200 + n)
    a = rng.standard_normal((37, n, n)).astype(dtype)
    eye = np.eye(n, dtype=dtype)
    a[3] = eye[rng.permutation(n)] * dtype(3)
    a[7] = 0  # every pivot 0: info 1
    a[8, 0, 0] = np.nan
    a[10, n - 1, n - 1] = np.inf
    a[12] = np.round(a[12] * 2)  # ties in the pivot search
    a[17] = np.triu(a[17]) + 4 * eye  # no swap needed
    if n >= 2:
        a[4, :, 1] = 0  # a zero pivot in column 1 (info 2) with the later ones nonzero
        a[9, n - 1] = a[9, 0]  # equal rows: a zero (or tiny) pivot at the last step
    b = rng.standard_normal((37, n, 3)).astype(dtype)
    b[20, 0, 1] = np.inf
    x, info = kernels.solve_ex(a, b)
    for i in range(37):
        xi, ii = kernels.solve_ex(a[i], b[i])
        np.testing.assert_array_equal(x[i], xi)
        assert info[i] == ii
    tx, tinfo = (t.numpy() for t in torch.linalg.solve_ex(torch.from_numpy(a), torch.from_numpy(b)))
    assert info[7] == 1 and (n < 2 or info[4] == 2)
    regular = (tinfo == 0) & (info == 0) & np.isfinite(a).all(axis=(1, 2)) & np.isfinite(b).all(axis=(1, 2))
    regular[9] = False  # equal rows: torch's pivot may be rounded off zero
    np.testing.assert_array_equal(info[[7, 4] if n >= 2 else [7]], tinfo[[7, 4] if n >= 2 else [7]])
    cond = np.linalg.cond(a[regular].astype(np.float64))
    err = np.abs(x[regular] - tx[regular]).max(axis=(1, 2)) / np.maximum(1, np.abs(tx[regular]).max(axis=(1, 2)))
    assert (err <= 64 * n * EPS[dtype] * cond).all()
    assert not np.isfinite(x[8]).all() and not np.isfinite(x[20]).all()
    np.testing.assert_array_equal(session(SolveEx, DOM, {"A": a, "B": b}).run(None, {"A": a, "B": b})[0], x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", range(1, 9))
def test_slogdet_of_a_batch_is_each_matrix_alone_and_torch(dtype, n):
    """n <= 8 factors a vector's width of matrices at once, one per lane (and the rest one by one):
    37 matrices (whole groups of 16, 8, 4 or 2 lanes and a rest), each lane its own pivots, swaps'
    parity and special case: exact zero pivots, NaN, inf, huge and tiny entries, permutations. Each
    matrix's result is its own (as alone) and torch's."""
    rng = np.random.default_rng(100 + n)
    a = rng.standard_normal((37, n, n)).astype(dtype)
    big = 1e30 if dtype == np.float32 else 1e200
    eye = np.eye(n, dtype=dtype)
    a[3] = eye[rng.permutation(n)]  # a permutation: sign its parity, log|det| 0
    a[5] = eye[::-1] * dtype(-2)
    a[7] = 0  # every pivot 0
    a[8, 0, 0] = np.nan
    a[10, n - 1, n - 1] = np.inf
    a[12] *= big  # log|det| far past the dtype's range, either way
    a[13] /= big
    a[17] = np.triu(a[17])  # no swap needed
    a[20, 0, 0] = -np.inf
    if n >= 2:
        a[4, :, n - 1] = a[4, :, 0]  # two equal columns: an exact zero pivot of A^T's LU
        a[9, 0] = 0  # a zero column of A^T: a zero pivot (no update) with later ones nonzero
        a[21, 1, 1] = np.nan
    ws, wl = (t.numpy() for t in torch.linalg.slogdet(torch.from_numpy(a)))
    sign, logabs = kernels.slogdet(a)
    alone = [kernels.slogdet(m) for m in a]
    np.testing.assert_array_equal(sign, [s for s, _ in alone])
    np.testing.assert_allclose(logabs, [v for _, v in alone], rtol=4 * n * EPS[dtype], atol=0)
    if n >= 2:  # an exact zero pivot (MKL's blocked LU may round it to a tiny one instead)
        assert sign[4] == 0 and logabs[4] == -np.inf
        ws[4], wl[4] = sign[4], logabs[4]
    np.testing.assert_array_equal(sign, ws)
    finite = np.isfinite(wl)
    np.testing.assert_array_equal(logabs[~finite], wl[~finite])
    np.testing.assert_allclose(logabs[finite], wl[finite], rtol=0,
                               atol=n * 200 * EPS[dtype] * max(1, np.abs(wl[finite]).max()))
    s2, l2 = session(Slogdet, DOM, {"A": a}).run(None, {"A": a})
    np.testing.assert_array_equal(s2, sign)
    np.testing.assert_array_equal(l2, logabs)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_slogdet_goes_on_past_a_zero_pivot_as_torch(dtype):
    """A zero pivot (A^T's column 0: NaN, then zeros; the pivot is the first zero, row 1) still swaps
    its rows, and the steps after it go on as getrf's: the next pivot is the 100 brought up, whose
    column below is NaN, so the later pivots are NaN and log|det| NaN (without the swap: -inf).
    On every path: the padded one (9 <= n <= 64, A^T's factors in A's layout) and the recursive one."""
    for n in (9, 12, 40, 64, 65, 130):
        a = np.random.default_rng(n).uniform(-0.9, 0.9, (1, n, n)).astype(dtype)
        a[0, 0, 0], a[0, 0, 1:] = np.nan, 0
        a[0, 1, 0], a[0, 2:, 0] = 100, np.nan
        sign, logabs = kernels.slogdet(a)
        want = torch.linalg.slogdet(torch.from_numpy(a))
        assert sign == 0 and np.isnan(logabs), (n, sign, logabs)
        np.testing.assert_array_equal(sign, want.sign.numpy())
        np.testing.assert_array_equal(logabs, want.logabsdet.numpy())


def test_slogdet_of_huge_and_tiny_determinants_does_not_overflow():
    for scale, n in ((1e3, 300), (1e-3, 300)):
        a = np.eye(n) * scale
        a[0, 0] = -scale
        sign, logabs = kernels.slogdet(a)
        assert sign == -1 and np.isclose(logabs, n * np.log(scale), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_slogdet_of_a_power_of_two_is_its_exponent_times_ln2_exactly(dtype):
    """The identity, a permutation and 2^k I: log|det| exactly 0 (as torch's) and the correctly
    rounded k n ln 2, on every path (fused n <= 8, unblocked, recursive)."""
    for n in (1, 3, 8, 9, 64, 65, 600):
        eye = np.eye(n, dtype=dtype)
        perm = eye[::-1].copy()
        for a, want_sign in ((eye, 1), (perm, -1 if (n // 2) % 2 else 1)):
            sign, logabs = kernels.slogdet(a)
            assert sign == want_sign and logabs == 0, (n, sign, logabs)
            s2, l2 = session(Slogdet, DOM, {"A": a[None]}).run(None, {"A": a[None]})
            assert s2[0] == want_sign and l2[0] == 0, (n, s2, l2)
            t = torch.linalg.slogdet(torch.from_numpy(a))
            assert t.sign.item() == want_sign and t.logabsdet.item() == 0
        sign, logabs = kernels.slogdet(eye * 4)
        assert sign == 1 and logabs == dtype(2 * n * np.log(2.0)), (n, logabs)


def test_nan_inf_and_empty_as_torch():
    for a in (np.full((3, 3), np.nan), np.array([[1.0, np.inf], [0, 1]]), np.zeros((2, 0, 0)), np.zeros((0, 3, 3)),
              np.zeros((3, 3))):
        ws, wl = (t.numpy() for t in torch.linalg.slogdet(torch.from_numpy(a)))
        sign, logabs = kernels.slogdet(a)
        np.testing.assert_array_equal(sign, ws)
        np.testing.assert_array_equal(logabs, wl)
    for sa, sb in (((2, 0, 0), (2, 0, 3)), ((0, 3, 3), (0, 3, 1)), ((3, 3), (3, 0)), ((0, 3, 3), (3,))):
        a, b = np.zeros(sa, np.float32), np.zeros(sb, np.float32)
        want = torch.linalg.solve_ex(torch.from_numpy(a), torch.from_numpy(b))
        x, info = kernels.solve_ex(a, b)
        assert x.shape == tuple(want[0].shape) and info.shape == tuple(want[1].shape)
        np.testing.assert_array_equal(info, want[1].numpy())  # A = 0 (3 x 3) is singular even with no B columns
        if not info.any():
            assert solve_all_paths(a, b).shape == x.shape
    x, info = kernels.solve_ex(np.full((2, 2), np.nan), np.ones((2, 1)))  # NaN: no error, NaN out (as torch)
    assert info == 0 and np.isnan(x).all()
    assert np.isnan(kernels.solve(np.full((2, 2), np.nan), np.ones((2, 1)))).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("k", [16, 37, 300])  # whole vectors, a partial one, and two column chunks (256 + 44)
def test_many_right_hand_sides_of_a_large_matrix(dtype, k):
    """B with many columns (the large factors' blocked column solve): every column solved as alone."""
    rng = np.random.default_rng(k)
    n = 150
    a = rng.standard_normal((n, n)).astype(dtype)
    b = rng.standard_normal((n, k)).astype(dtype)
    x = solve_all_paths(a, b)
    assert_solution(a, b, x)
    alone = np.stack([kernels.solve(a, np.ascontiguousarray(b[:, [c]]))[:, 0] for c in (0, k // 2, k - 1)], 1)
    cond = np.linalg.cond(a.astype(np.float64))
    np.testing.assert_allclose(x[:, [0, k // 2, k - 1]], alone, rtol=0, atol=cond * 64 * n * EPS[dtype] * np.abs(alone).max())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_large_and_badly_conditioned(dtype):
    rng = np.random.default_rng(5)
    n = 600
    q1, _ = np.linalg.qr(rng.standard_normal((n, n)))
    q2, _ = np.linalg.qr(rng.standard_normal((n, n)))
    cond = 1e5 if dtype == np.float32 else 1e12
    a = ((q1 * np.logspace(0, -np.log10(cond), n)) @ q2).astype(dtype)
    b = rng.standard_normal((n, 4)).astype(dtype)
    assert_solution(a, b, kernels.solve(a, b))  # a small backward error whatever the condition
    x = session(Solve, DOM, {"A": a, "B": b}).run(None, {"A": a, "B": b})[0]
    assert_solution(a, b, x)
    bt = rng.standard_normal((4, n)).astype(dtype)
    assert_solution(a, bt, kernels.solve(a, bt, left=0), left=0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(257, 257), (2, 300, 300)])  # one matrix; few large (parallel inside each)
def test_equal_lines_of_a_large_matrix_give_an_exact_zero_pivot(dtype, shape):
    """Two equal rows stay equal through every blocked update until one is the pivot: the other
    then cancels exactly, so Solve reports the matrix singular (as getrf and torch's solve); Slogdet
    factors A^T (as torch's slogdet), so two equal columns give it sign 0."""
    rng = np.random.default_rng(7)
    a = rng.standard_normal(shape).astype(dtype)
    a[..., 200, :] = a[..., 3, :]
    b = rng.standard_normal(shape[:-1]).astype(dtype)
    with pytest.raises(InvalidArgument, match="batch index 0 is singular"):
        session(Solve, DOM, {"A": a, "B": b}).run(None, {"A": a, "B": b})
    assert (kernels.solve_ex(a, b)[1] > 0).all()
    sign, logabs = kernels.slogdet(np.ascontiguousarray(np.swapaxes(a, -1, -2)))
    assert (sign == 0).all() and (logabs == -np.inf).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(100, 100), (4, 100, 100)])  # the single matrix's and the batch's paths
@pytest.mark.parametrize("tiny", [False, True])
def test_the_multipliers_are_rounded_quotients_so_a_scaled_row_cancels_exactly(dtype, shape, tiny):
    """The leaves' multipliers are correctly rounded quotients (x / d: the product by 1 / d corrected
    once by its residual, or a true division where the residual could be subnormal): row 60, row 7
    times -0.5 (or 1), takes exactly that multiplier at step 0 (row 7 the pivot, 8 d) and cancels
    exactly, so the matrix is reported singular. d is one whose d * (1 / d) is not 1: a product by the
    reciprocal left uncorrected misses the multiplier by an ulp and row 60 does not cancel."""
    one = dtype(1)
    d = next(dtype(1 + k / 1024) for k in range(1, 1024) if dtype(1 + k / 1024) * (one / dtype(1 + k / 1024)) != one)
    scale = dtype(2.0 ** (-1010 if dtype == np.float64 else -116)) if tiny else one
    rng = np.random.default_rng(9)
    a = rng.standard_normal(shape).astype(dtype)
    a[..., 7, 0] = 8 * d
    for m, c in enumerate([-0.5, 1.0, -0.5, 1.0][: a.reshape(-1, 100, 100).shape[0]]):
        a.reshape(-1, 100, 100)[m, 60] = dtype(c) * a.reshape(-1, 100, 100)[m, 7]
    a *= scale
    b = rng.standard_normal(shape[:-1]).astype(dtype)
    assert (kernels.solve_ex(a, b)[1] > 0).all()
    sign, logabs = kernels.slogdet(np.ascontiguousarray(np.swapaxes(a, -1, -2)))  # (of A^T: row 60 a column)
    assert (sign == 0).all() and (logabs == -np.inf).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [333, 700])  # 700: look-ahead and row-blocked products a few levels down
def test_results_do_not_depend_on_the_thread_count(dtype, n):
    rng = np.random.default_rng(8)
    a = rng.standard_normal((n, n)).astype(dtype)
    b = rng.standard_normal((n, 5)).astype(dtype)
    got = []
    try:
        for t in (1, 2, 3):
            kernels.set_threads(t)
            got.append((kernels.solve(a, b), kernels.slogdet(a)[1]))
    finally:
        kernels.set_threads(None)
    for x, logabs in got[1:]:
        np.testing.assert_array_equal(x, got[0][0])
        np.testing.assert_array_equal(logabs, got[0][1])
    assert_solution(a, b, got[0][0])


@pytest.mark.parametrize(("sa", "sb", "left", "match"), [
    ((3,), (3, 1), 1, r"input A has shape \(3,\).*\(\*, N, N\)"),
    ((2, 3), (2, 1), 1, r"input A has shape \(2, 3\).*square"),
    ((3, 3), (4, 1), 1, r"input B has shape \(4, 1\); incompatible with A of shape \(3, 3\) for A X = B"),
    ((3, 3), (1, 4), 0, r"input B has shape \(1, 4\); incompatible with A of shape \(3, 3\) for X A = B"),
    ((3, 3), (3,), 0, r"input B has shape \(3,\); a batch of vectors .*left=0"),
    ((2, 3, 3), (3, 3, 1), 1, r"input B has shape \(3, 3, 1\); its batch dims do not broadcast"),
    ((3, 3), (), 1, r"input B has shape \(\)"),
])
def test_bad_shapes_are_clear_errors(sa, sb, left, match):
    a, b = np.ones(sa, np.float32), np.ones(sb, np.float32)
    for op in (Solve, SolveEx):
        sess = session(op, DOM, {"A": (np.float32, None), "B": (np.float32, None)}, attrs={"left": left})
        with pytest.raises(InvalidArgument, match=rf"{op.name} \(node 'n0'\): " + match):
            sess.run(None, {"A": a, "B": b})
    if len(sa) < 2 or sa[-1] != sa[-2]:
        with pytest.raises(InvalidArgument, match=r"Slogdet \(node 'n0'\): input A has shape"):
            session(Slogdet, DOM, {"A": (np.float32, None)}).run(None, {"A": a})


def test_output_shapes_inferred():
    model = make_model(Solve, DOM, {"A": (np.float32, ["b", 4, 4]), "B": (np.float32, ["b", 4])})
    for o in model.graph.output:
        o.type.tensor_type.ClearField("shape")
    sess = ort.InferenceSession(model.SerializeToString(), ortcustom.session_options(DOM), providers=CPU)
    assert sess.get_outputs()[0].shape == ["b", 4]
    model = make_model(SolveEx, DOM, {"A": (np.float32, [2, 1, 4, 4]), "B": (np.float32, [3, 4, 5])})
    for o in model.graph.output:
        o.type.tensor_type.ClearField("shape")
    sess = ort.InferenceSession(model.SerializeToString(), ortcustom.session_options(DOM), providers=CPU)
    assert [o.shape for o in sess.get_outputs()] == [[2, 3, 4, 5], [2, 1]]
    model = make_model(Slogdet, DOM, {"A": (np.float64, ["b", "c", 4, 4])})
    sess = ort.InferenceSession(model.SerializeToString(), ortcustom.session_options(DOM), providers=CPU)
    assert [o.shape for o in sess.get_outputs()] == [["b", "c"], ["b", "c"]]
    assert [o.type for o in sess.get_outputs()] == ["tensor(double)"] * 2


def test_avx2_and_avx512_passes_give_the_same_bits():
    """Both FMA passes take every element's updates one at a time in step order, whatever their
    tiles (AVX2: 2 vectors x 6 columns; AVX-512: 2 x 12, triangular-solve leaves in registers): the
    recursive LU's solutions and determinants agree bit for bit (a product or leaf that reordered
    or skipped a term, or read a column it should not, differs)."""
    import os
    import subprocess
    import sys

    from ortcustom.native import builtin_info

    if builtin_info("cpu_isa") != "avx512":
        pytest.skip("needs an AVX-512 machine")
    code = (
        "import sys, numpy as np\n"
        "from ortcustom import kernels\n"
        "out = []\n"
        "for dt in (np.float32, np.float64):\n"
        "    for shape in ((65, 65), (130, 130), (2, 203, 203), (333, 333)):\n"
        "        rng = np.random.default_rng(shape[-1])\n"
        "        a = rng.standard_normal(shape).astype(dt)\n"
        "        b = rng.standard_normal(shape[:-1] + (3,)).astype(dt)\n"
        "        out += [kernels.solve(a, b), kernels.slogdet(a)[1], kernels.solve(a, b[..., 0])]\n"
        "np.savez(sys.argv[1], *out)\n")
    got = []
    for isa in ("avx2", "avx512"):
        path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"oc_lu_bits_{os.getpid()}_{isa}.npz")
        env = dict(os.environ, ORTCUSTOM_ISA=isa)
        r = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True, timeout=300, env=env)
        assert r.returncode == 0, r.stderr
        with np.load(path) as f:
            got.append([f[k] for k in f.files])
        os.remove(path)
    assert len(got[0]) == len(got[1]) == 24
    for x, y in zip(*got):
        np.testing.assert_array_equal(x, y)
