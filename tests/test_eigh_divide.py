"""Eigh's eigenvectors by divide and conquer (kernels/cpu/eigh.cpp, from n = 32; blocks up to 24 by the QL
iteration): the merges' deflation (tiny z entries, equal and close eigenvalues, zero couplings: whole halves
uncoupled), the secular equation's roots and the recomputed z (orthogonality however close the roots), sizes
either side of the thresholds, and results independent of the thread count and of the batch."""
import numpy as np
import pytest

from ortcustom import kernels

from test_eigh import assert_eigh, assert_values_agree

rng = np.random.default_rng(2024)


def with_values(vals, dtype=np.float64, seed=0):
    n = len(vals)
    q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((n, n)))
    return ((q * np.asarray(vals, np.float64)) @ q.T).astype(dtype)


def tridiagonal(d, e):
    return np.diag(np.asarray(d, np.float64)) + np.diag(e, 1) + np.diag(e, -1)


def check(a, uplo="L"):
    w, v = kernels.eigh(a, UPLO=uplo)
    assert_eigh(a, w, v, uplo)
    assert_values_agree(a, w, kernels.eigvalsh(a, UPLO=uplo), uplo)
    return w, v


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [24, 25, 31, 32, 33, 48, 49, 63, 64, 65, 97, 128, 200])
def test_sizes_either_side_of_the_thresholds(dtype, n):
    a = rng.standard_normal((2, n, n)).astype(dtype)
    for uplo in ("L", "U"):
        check(a, uplo)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_identity_plus_rank_one_deflates_all_but_one(dtype):
    """n - 1 equal eigenvalues: every merge deflates by the close-values rotation (rows of both halves mixed)."""
    for n in (64, 100, 257):
        u = rng.standard_normal(n)
        a = (np.eye(n) + np.outer(u, u) / n).astype(dtype)
        w, _ = check(a)
        np.testing.assert_allclose(w[:-1], 1.0, atol=8 * n * np.finfo(dtype).eps)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_repeated_and_clustered_values(dtype):
    n = 120
    for vals in ([1.0] * 40 + [2.0] * 40 + [-3.0] * 40,
                 np.concatenate([1 + 1e-13 * np.arange(60), 2 + 1e-9 * rng.standard_normal(60)]),
                 np.concatenate([np.zeros(100), rng.standard_normal(20)])):
        check(with_values(vals, dtype, seed=len(vals)))


def test_wilkinson_matrices_pairs_of_nearly_equal_values():
    """W+ (d = |i - m|, e = 1): its largest values come in pairs equal to many digits."""
    for n in (65, 101, 201):
        m = (n - 1) // 2
        a = tridiagonal(np.abs(np.arange(n) - m), np.ones(n - 1))
        w, _ = check(a)
        assert w[-1] - w[-2] < 1e-10  # the pair is there: the deflation of close values is reached


@pytest.mark.parametrize("n", [40, 64, 100])
def test_the_sign_is_taken_on_the_rounded_entries(n):
    """diag(0..n-1) + ones beside it: vectors with entries equal in magnitude once rounded to float32 (the first
    of them is the one made positive, as the output holds them)."""
    a = tridiagonal(np.arange(n), np.ones(n - 1))
    for dtype in (np.float32, np.float64):
        check(a.astype(dtype))


def test_graded_and_glued_tridiagonals():
    n = 150
    check(tridiagonal(10.0 ** -np.linspace(0, 12, n), 10.0 ** -np.linspace(0, 12, n - 1)))  # graded
    e = np.ones(n - 1)
    e[::25] = 0  # exactly uncoupled blocks: merges with rho = 0 deflate everything
    check(tridiagonal(rng.standard_normal(n), e))
    e[::25] = 1e-14  # nearly uncoupled: rho z tiny
    check(tridiagonal(rng.standard_normal(n), e))
    check(np.diag(rng.standard_normal(n)))  # diagonal: nothing to reduce
    check(np.ones((n, n)))  # rank one: n - 1 zeros
    check(np.zeros((n, n)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_batch_and_threads_give_the_same_bits(dtype):
    a = rng.standard_normal((5, 90, 90)).astype(dtype)
    b = rng.standard_normal((2, 300, 300)).astype(dtype)
    got = []
    try:
        for t in (1, 2, 3):
            kernels.set_threads(t)
            got.append((*kernels.eigh(a), *kernels.eigh(b)))
    finally:
        kernels.set_threads(None)
    for x in got[1:]:
        for g, want in zip(x, got[0]):
            np.testing.assert_array_equal(g, want)
    for i in range(len(a)):  # a matrix alone as in its batch
        for g, want in zip(kernels.eigh(a[i]), got[0][:2]):
            np.testing.assert_array_equal(g, want[i])
    for i in range(len(b)):
        for g, want in zip(kernels.eigh(b[i]), got[0][2:]):
            np.testing.assert_array_equal(g, want[i])
    assert_eigh(b, got[0][2], got[0][3], "L")


@pytest.mark.parametrize("n", [32, 47, 64, 129, 257, 512])
def test_float32_in_float_from_32(n):
    """float32 eigh from n = 32 (eigvalsh from 64) is reduced, merged and back-transformed in float (the
    tridiagonal's values, roots and deflation in double): LAPACK's float accuracy (assert_eigh's n eps_float
    bounds) across magnitudes, a spread spectrum and clusters, both triangles, and the same bits on 1 and 2
    threads (a single matrix of n >= 128 splits its reduction, merges and back-transformation into tasks)."""
    a = rng.standard_normal((n, n)).astype(np.float32)
    for scale in (1.0, 2.0 ** 100, 2.0 ** -100):
        check((a * scale).astype(np.float32), "L")
    check(a, "U")
    vals = np.concatenate([10.0 ** -np.linspace(0, 6, n // 2), np.resize([1.0, -2.0], n - n // 2)])  # spread, clusters
    check(with_values(vals, np.float32, seed=n))
    got = []
    try:
        for t in (1, 2):
            kernels.set_threads(t)
            got.append((*kernels.eigh(a), kernels.eigvalsh(a)))
    finally:
        kernels.set_threads(None)
    for g, want in zip(got[1], got[0]):
        np.testing.assert_array_equal(g, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_concurrent_subtrees_and_row_chunks_give_the_same_bits(dtype):
    """A matrix of n >= 128 alone solves the divide's four subtrees as concurrent tasks (each in its own part
    of the working memory), then back-transforms fixed chunks of rows, each through every block of
    reflections, alongside the values' QL: the same bits on 1, 2 and 3 threads and as in a batch of 4 (each
    matrix on one thread), at sizes with partial blocks of reflections and a partial last chunk."""
    for n in (128, 131, 389):
        a = rng.standard_normal((4, n, n)).astype(dtype)
        a[1] = with_values(np.resize([1.0, 1.0, -2.0, 3.0], n), dtype, seed=n)  # merges deflating many values
        batch = (*kernels.eigh(a), kernels.eigvalsh(a))
        assert_eigh(a, batch[0], batch[1], "L")
        try:
            for t in (1, 2, 3):
                kernels.set_threads(t)
                for i in range(len(a)):
                    got = (*kernels.eigh(a[i]), kernels.eigvalsh(a[i]))
                    for g, want in zip(got, batch):
                        np.testing.assert_array_equal(g, want[i])
        finally:
            kernels.set_threads(None)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_large_matrix_checks_only_its_triangle_for_nan_and_inf(dtype):
    """The triangle read is checked and copied in tasks over rows (U: rows from the diagonal, L: up to it): a
    NaN or an infinity anywhere in it is an error, one outside it is never seen."""
    a = rng.standard_normal((300, 300)).astype(dtype)
    a = a + a.T
    want = {uplo: kernels.eigvalsh(a, UPLO=uplo) for uplo in ("L", "U")}
    for i, j in ((299, 0), (150, 149), (200, 17), (0, 0), (299, 299)):
        for bad in (np.inf, -np.inf, np.nan):
            for uplo, (r, c) in (("L", (i, j)), ("U", (j, i))):
                b = a.copy()
                b[r, c] = bad  # in the triangle read
                with pytest.raises(ValueError, match="batch index 0 holds a NaN or an infinity"):
                    kernels.eigh(b, UPLO=uplo)
                if i != j:  # in the other triangle only: not read
                    np.testing.assert_array_equal(kernels.eigvalsh(b, UPLO="U" if uplo == "L" else "L"),
                                                  want["U" if uplo == "L" else "L"])


def values_cases(n):
    """Tridiagonals and matrices whose merges take each branch: deflation of tiny z entries and of close
    values (rows rotated), merges keeping one value or none (rho = 0), and the plain secular roots."""
    u = np.random.default_rng(n).standard_normal(n)
    e = np.ones(n - 1)
    glued, nearly = e.copy(), e.copy()
    glued[::25] = 0
    nearly[::25] = 1e-14
    m = (n - 1) // 2
    x = rng.standard_normal((n, n))
    return {
        "random": x + x.T,
        "identity plus rank one": np.eye(n) + np.outer(u, u) / n,
        "repeated values": with_values(np.concatenate([np.resize([1.0, 2.0, -3.0], n - 40), u[:40]]), seed=n),
        "a cluster 1e-9 wide": with_values(np.concatenate([2 + 1e-9 * u[: n // 2], u[n // 2:]]), seed=n + 1),
        "uncoupled blocks": tridiagonal(u, glued),
        "nearly uncoupled blocks": tridiagonal(u, nearly),
        "graded": tridiagonal(10.0 ** -np.linspace(0, 12, n), 10.0 ** -np.linspace(0, 12, n - 1)),
        "wilkinson": tridiagonal(np.abs(np.arange(n) - m), e),
        "rank one": np.ones((n, n)),
        "diagonal": np.diag(u),
        "zeros": np.zeros((n, n)),
    }


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [255, 256, 300, 389])
def test_values_alone_by_divide_and_conquer_from_256(dtype, n):
    """Eigvalsh from n = 256 by divide and conquer carrying each eigenvector's first and last entries only:
    within n eps ||A|| of LAPACK's values in double, on 1 and 2 threads in the same bits, alone as in a
    batch (255: the root-free QL, for comparison)."""
    cases = values_cases(n)
    a = np.stack([c.astype(dtype) for c in cases.values()])
    try:
        got = []
        for t in (1, 2):
            kernels.set_threads(t)
            got.append(kernels.eigvalsh(a))
            got.append(np.stack([kernels.eigvalsh(x) for x in a[:3]]))
    finally:
        kernels.set_threads(None)
    want = np.linalg.eigvalsh(a.astype(np.float64))
    norm = np.linalg.norm(a.astype(np.float64), axis=(-2, -1))
    for name, w, ref, nrm in zip(cases, got[0], want, norm):
        err = np.abs(w.astype(np.float64) - ref).max()
        assert err <= n * np.finfo(dtype).eps * max(nrm, np.finfo(dtype).tiny), (name, err / max(nrm, 1e-300))
    np.testing.assert_array_equal(got[2], got[0])
    np.testing.assert_array_equal(got[1], got[0][:3])
    np.testing.assert_array_equal(got[3], got[0][:3])
