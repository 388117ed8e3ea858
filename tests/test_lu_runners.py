"""The CPU LU of a large matrix (kernels/cpu/solve.cpp) runs one parallel region per matrix
(kernels/cpu/team.h), its update's items in blocks of rows that wait on a counter for the row swaps
and solves before them, and must not assume anything of how the host runs the region's tasks:
tests/native/lu_runners.cpp builds it with the runners of tests/native/runners.h (on the calling
thread in order or backwards, one at a time each on a thread of its own, a few threads at once, one
of them late). Under each: the same bits as with no runner, factors that reproduce P A, and no
deadlock (each call in a thread given a time limit). A team of two takes blocked steps instead of
the recursion (lu_recursive.inc's LuBlocks): the same bits again."""
import ctypes

import numpy as np
import pytest

from helpers import row_cycled, runner_library, within_limit

from ortcustom import kernels

P = ctypes.c_void_p


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    lib = runner_library(tmp_path_factory, "solve.cpp", "lu_runners", "-DOC_LU_TRACE")
    lib.lu_blocked_runs.restype = ctypes.c_long
    for name in ("lu_f32_with", "lu_f64_with"):
        getattr(lib, name).argtypes = [ctypes.c_int, P, P, P, P, ctypes.c_int64, ctypes.c_int64]
    lib.slogdet_f64_with.argtypes = [ctypes.c_int, P, P, P, P, P, P, ctypes.c_int64, ctypes.c_int64]
    return lib


def factor(lib, kind, a):
    """(lu, piv, info) of a (batch, n, n) by oc_lu under runner `kind`."""
    batch, n = a.shape[0], a.shape[-1]
    lu, piv, info = np.empty_like(a), np.empty((batch, n), np.int32), np.empty(batch, np.int32)
    fn = lib.lu_f32_with if a.dtype == np.float32 else lib.lu_f64_with
    within_limit(fn, kind, a.ctypes.data, lu.ctypes.data, piv.ctypes.data, info.ctypes.data, batch, n)
    return lu, piv, info


def assert_factors(a, lu, piv):
    """P A = L U to a small multiple of the precision (lu column-major above n = 64, as lu.h says)."""
    n = a.shape[-1]
    eps = np.finfo(a.dtype).eps
    for m in range(a.shape[0]):
        f = (lu[m].T if n > 64 else lu[m]).astype(np.float64)
        pa = a[m].astype(np.float64)
        for k, p in enumerate(piv[m]):
            pa[[k, p]] = pa[[p, k]]
        l, u = np.tril(f, -1) + np.eye(n), np.triu(f)
        err = np.abs(pa - l @ u).max() / np.abs(a[m]).max()
        assert err < 20 * n * eps, (m, err)


@pytest.mark.parametrize("dtype, n, batch", [(np.float32, 257, 1), (np.float64, 700, 1), (np.float32, 300, 3),
                                             (np.float64, 100, 6), (np.float32, 40, 9)])
def test_lu_has_the_same_bits_under_every_runner(lib, dtype, n, batch):
    """A single large matrix (257: one chunk and a bit; 700: the update in blocks of rows), few large
    ones (each in parallel inside), the batch paths (one task per matrices: column-major at 100,
    row-major at 40)."""
    x = np.ascontiguousarray(row_cycled(np.random.default_rng(n), (batch, n, n), dtype))
    ref = factor(lib, 0, x)
    assert_factors(x, ref[0], ref[1])
    assert (ref[2] == 0).all()
    for kind in range(lib.runner_kinds()):
        for got, want, what in zip(factor(lib, kind, x), ref, ("lu", "piv", "info")):
            np.testing.assert_array_equal(got, want, err_msg=f"runner {kind}: {what}")


def test_slogdet_and_a_zero_pivot_under_every_runner(lib):
    """Two equal rows (and columns) cancel exactly under every runner (info names the step; slogdet,
    on A^T, sign 0); the determinant's bits are those of the library's own build (kernels.slogdet)."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((2, 300, 300))
    a[1, 250] = a[1, 9]
    a[1, :, 250] = a[1, :, 9]  # (row 250 stays row 9)
    want_sign, want_logabs = kernels.slogdet(a)
    assert want_sign[1] == 0 and want_logabs[1] == -np.inf
    np.testing.assert_allclose(want_logabs[0], np.linalg.slogdet(a[0])[1], rtol=1e-10)
    for kind in range(lib.runner_kinds()):
        info = factor(lib, kind, a)[2]
        assert info[0] == 0 and info[1] > 0, (kind, info)
        lu, piv, info = np.empty_like(a), np.empty((2, 300), np.int32), np.empty(2, np.int32)
        sign, logabs = np.empty(2), np.empty(2)
        within_limit(lib.slogdet_f64_with, kind, a.ctypes.data, lu.ctypes.data, piv.ctypes.data, info.ctypes.data,
                     sign.ctypes.data, logabs.ctypes.data, 2, 300)
        np.testing.assert_array_equal(sign, want_sign, err_msg=f"runner {kind}")
        np.testing.assert_array_equal(logabs, want_logabs, err_msg=f"runner {kind}")


@pytest.mark.parametrize("dtype, n", [(np.float64, 700), (np.float32, 520), (np.float32, 1030)])
def test_blocked_steps_give_the_recursions_bits_under_every_runner(lib, dtype, n):
    """Blocks of 48 (700), 40 (520: 13 whole ones) and 72 (1030: the last one 22 wide) columns. A team
    that is two after the first panel and after step 0 takes the blocked steps to the end; a host
    that runs one task at a time (runners 0-3) never has two, so after step 0 the recursion takes
    the rest (panel 1's update, then lu_rec). Then with the blocked steps made the way whatever the
    team (the trace build's switch): one thread does every block, a third thread only takes what
    the others left, a late one comes in the middle. Each gives the recursion's bits: the factors,
    the pivots, and (slogdet: only U's diagonal kept) the determinant."""
    x = np.ascontiguousarray(row_cycled(np.random.default_rng(n), (1, n, n), dtype))
    lib.lu_force_blocked(0)
    ref = factor(lib, 0, x)
    assert_factors(x, ref[0], ref[1])
    lib.lu_blocked_runs()
    try:
        for force in (0, 1):
            lib.lu_force_blocked(force)
            for kind in range(lib.runner_kinds()):
                for got, want, what in zip(factor(lib, kind, x), ref, ("lu", "piv", "info")):
                    np.testing.assert_array_equal(got, want, err_msg=f"runner {kind}, forced {force}: {what}")
                runs = lib.lu_blocked_runs()
                assert runs == 1 if force else kind >= 4 or runs == 0, (kind, force, runs)
        if dtype == np.float64:
            got = []
            for force, kind in ((0, 0), (1, 0), (1, lib.runner_kinds() - 1)):
                lib.lu_force_blocked(force)
                lu, piv, info = np.empty_like(x), np.empty((1, n), np.int32), np.empty(1, np.int32)
                sign, logabs = np.empty(1), np.empty(1)
                within_limit(lib.slogdet_f64_with, kind, x.ctypes.data, lu.ctypes.data, piv.ctypes.data,
                             info.ctypes.data, sign.ctypes.data, logabs.ctypes.data, 1, n)
                got.append((sign[0], logabs[0], lib.lu_blocked_runs()))
            want_sign, want_logabs = np.linalg.slogdet(x[0])
            assert got == [(want_sign, got[0][1], 0), (want_sign, got[0][1], 1), (want_sign, got[0][1], 1)]
            assert abs(got[0][1] - want_logabs) < 1e-10 * abs(want_logabs)
    finally:
        lib.lu_force_blocked(0)
