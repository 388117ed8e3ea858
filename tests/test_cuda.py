"""The CUDA kernels, in ORT's CUDA provider (inputs bound on the GPU with IOBinding, no host round
trip) and directly on CuPy arrays; checked against CuPy. Skips where there is no GPU (or no CuPy,
or ortcustom was built without CUDA); on a machine with a GPU, an ORT whose CUDA provider is
missing or does not start is a failure, not a skip."""
import json

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import ortcustom
from ortcustom import kernels
from ortcustom.native import builtin_info
from ortcustom.ops import (Cholesky, CholeskyEx, Eigh, Eigvalsh, GroupNorm, Inverse, Qr, SearchSorted, Slogdet, Solve,
                           SolveEx, SolveTriangular, Svd, Svdvals)
from ortcustom.testing import make_model

from helpers import assert_inverse, random_normal, row_cycled, well_conditioned


def _gpus():
    """How many CUDA GPUs this machine has, by whichever library can tell (0: none or no driver)."""
    n = builtin_info("cuda_device_count") if builtin_info("cuda_built") else 0
    try:
        import torch

        n = max(n, torch.cuda.device_count())
    except Exception:  # no torch, or a CPU build
        pass
    try:
        import cupy

        n = max(n, cupy.cuda.runtime.getDeviceCount())
    except Exception:  # no cupy, or no driver
        pass
    return n


if _gpus() == 0:
    pytest.skip("no CUDA GPU or driver on this machine", allow_module_level=True)
cp = pytest.importorskip("cupy", reason="needs CuPy (pip install cupy-cuda13x)")
if not builtin_info("cuda_built"):
    pytest.skip("this ortcustom was built without CUDA (no nvcc at build time)", allow_module_level=True)

PROVIDERS = ["CUDAExecutionProvider", "CPUExecutionProvider"]
DOM = ortcustom.Domain("ortcustom").add(Inverse, GroupNorm, SearchSorted, Cholesky, CholeskyEx,
                                           SolveTriangular, Solve, SolveEx, Slogdet, Svd, Svdvals, Qr, Eigh, Eigvalsh)


def test_orts_cuda_provider_starts_on_this_gpu_machine():
    # were it skipped instead, a broken onnxruntime-gpu (missing CUDA libraries, a CPU-only wheel)
    # would leave every test below skipped and the run green
    assert "CUDAExecutionProvider" in ort.get_available_providers(), (
        f"this machine has a GPU but onnxruntime {ort.__version__} has no CUDA provider "
        f"({ort.get_available_providers()}): install onnxruntime-gpu")
    cuda_session(Inverse, {"X": (np.float32, [1, 2, 2])})


def cuda_session(op, inputs, attrs=None, so=None, outputs=None):
    model = make_model(op, DOM, inputs, attrs=attrs, outputs=outputs)
    sess = ort.InferenceSession(model.SerializeToString(), so or ortcustom.session_options(DOM), providers=PROVIDERS)
    if sess.get_providers()[0] != "CUDAExecutionProvider":
        pytest.fail(f"ORT's CUDA provider did not start on this GPU machine (providers: {sess.get_providers()}; "
                    f"see ORT's warnings above: usually missing CUDA or cuDNN libraries)")
    return sess


def run_bound(sess, feeds_gpu, host_feeds=None):
    """Runs with every input already on the GPU and the output left there; returns it as CuPy."""
    b = sess.io_binding()
    for name, arr in feeds_gpu.items():
        b.bind_input(name, "cuda", 0, arr.dtype, arr.shape, arr.data.ptr)
    for name, arr in (host_feeds or {}).items():
        b.bind_cpu_input(name, arr)
    b.bind_output(sess.get_outputs()[0].name, "cuda")
    sess.run_with_iobinding(b)
    out = b.get_outputs()[0]
    dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(out.element_type()))  # element_type(): ONNX's enum
    # device 0 named, as bound: an empty output's pointer is null, and CuPy cannot look that up
    mem = cp.cuda.UnownedMemory(out.data_ptr(), int(np.prod(out.shape())) * dtype.itemsize, out, 0)
    return cp.ndarray(out.shape(), dtype, cp.cuda.MemoryPointer(mem, 0)).copy()


DTYPES = [np.float32, np.float64, np.float16]


def _both_ways(x):
    """Inverse of the CuPy array x by ORT's CUDA provider and by the direct call, as NumPy arrays."""
    sess = cuda_session(Inverse, {"X": (x.dtype, ["b", x.shape[-1], x.shape[-1]])})
    return cp.asnumpy(run_bound(sess, {"X": x})), cp.asnumpy(kernels.inverse(x))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4096, 4, 4), (256, 16, 16), (8, 64, 64), (1, 1, 1), (2, 256, 256),
                                   (1, 1024, 1024)])
def test_inverse_on_gpu(dtype, shape):
    # relative to the float64 inverse, and by residual: an all-zero output fails at every size. float16's
    # bound (~5e-3 cond) needs cond < 10: n I alone left 7 of 4096 4x4 draws near cond 80 (H200 run), 2n I none
    n = shape[-1]
    x = well_conditioned(np.random.default_rng(0), shape, np.float64) + (n * np.eye(n) if dtype == np.float16 else 0)
    x = cp.asarray(x.astype(dtype))
    for y in _both_ways(x):
        assert_inverse(cp.asnumpy(x), y)


@pytest.mark.parametrize("dtype", DTYPES)
def test_inverse_of_an_empty_batch_on_gpu(dtype):
    x = cp.ones((0, 3, 3), dtype)
    for y in _both_ways(x):
        assert y.shape == (0, 3, 3) and y.dtype == dtype


# Every CUDA path: a thread per matrix (n <= 4), a warp group (n <= 32), a block with the matrix in
# shared memory, in place in the output with a row buffer (large n), float16 with a float workspace.
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [3, 4, 7, 16, 32, 33, 100, 300, 1024])
def test_inverse_on_gpu_of_matrices_that_need_pivoting(dtype, n):
    rng = np.random.default_rng(n)
    batch = 64 if n <= 32 else 4 if n <= 300 else 1
    cases = [row_cycled(rng, (batch, n, n), dtype)]
    if dtype == np.float64 or (dtype == np.float32 and n <= 48):  # (else too ill-conditioned to check)
        cases.append(random_normal(rng, (batch, n, n), dtype))
    for x in cases:
        for y in _both_ways(cp.asarray(x)):
            assert_inverse(x, y)


def test_inverse_singular_on_gpu_is_non_finite():
    x = cp.zeros((2, 3, 3), cp.float32)
    sess = cuda_session(Inverse, {"X": (np.float32, [2, 3, 3])})
    assert not cp.isfinite(run_bound(sess, {"X": x})).any()


def cupy_group_norm(x, groups, scale, bias, eps):
    n, c = x.shape[:2]
    g = x.astype(cp.float64).reshape(n, groups, -1)
    y = ((g - g.mean(-1, keepdims=True)) / cp.sqrt(g.var(-1, keepdims=True) + eps)).reshape(x.shape)
    shape = (1, c) + (1,) * (x.ndim - 2)
    return y * scale.astype(cp.float64).reshape(shape) + bias.astype(cp.float64).reshape(shape)


@pytest.mark.parametrize("dtype, tol", [(np.float32, 1e-4), (np.float64, 1e-10), (np.float16, 2e-2)])
@pytest.mark.parametrize("shape, groups", [((1, 32, 8, 8), 32), ((8, 64, 32, 32), 32), ((2, 320, 64, 64), 32),
                                           ((3, 6, 7), 3), ((2, 4, 1000, 1000), 2)])
def test_group_norm_on_gpu_matches_cupy(dtype, tol, shape, groups):
    rng = cp.random.default_rng(1)
    x = (rng.standard_normal(shape, dtype=cp.float64) * 2 + 3).astype(dtype)
    s = rng.standard_normal(shape[1], dtype=cp.float64).astype(dtype)
    b = rng.standard_normal(shape[1], dtype=cp.float64).astype(dtype)
    sess = cuda_session(GroupNorm, {"X": (dtype, list(shape)), "num_groups": (np.int64, []),
                                    "scale": (dtype, [shape[1]]), "bias": (dtype, [shape[1]])})
    y = run_bound(sess, {"X": x, "scale": s, "bias": b}, {"num_groups": np.array(groups, np.int64)})
    cp.testing.assert_allclose(y.astype(cp.float64), cupy_group_norm(x, groups, s, b, 1e-5), rtol=tol, atol=tol)


def test_nodes_run_on_the_cuda_provider(tmp_path):
    so = ortcustom.session_options(DOM)
    so.enable_profiling = True
    so.profile_file_prefix = str(tmp_path / "prof")
    sess = cuda_session(Inverse, {"X": (np.float32, [16, 4, 4])}, so=so)
    run_bound(sess, {"X": cp.asarray(well_conditioned(np.random.default_rng(0), (16, 4, 4), np.float32))})
    events = json.load(open(sess.end_profiling()))
    ours = [e for e in events if e.get("cat") == "Node" and e.get("args", {}).get("op_name") == "Inverse"]
    assert ours and all(e["args"]["provider"] == "CUDAExecutionProvider" for e in ours)
    # and no copies were put around it: no Memcpy nodes in the graph
    assert not [e for e in events if "Memcpy" in e.get("args", {}).get("op_name", "")]


def test_bad_input_on_gpu_is_an_error_and_session_survives():
    sess = cuda_session(Inverse, {"X": (np.float32, None)})
    with pytest.raises(Exception, match=r"Inverse \(node 'n0'\): input X has shape \(2, 3\)"):
        run_bound(sess, {"X": cp.ones((2, 3), cp.float32)})
    cp.testing.assert_allclose(run_bound(sess, {"X": 2 * cp.eye(3, dtype=cp.float32)}), cp.eye(3) / 2)


# ---- SearchSorted ----------------------------------------------------------------------------

def _searchsorted_on_gpu(seq, values, sorter=None, **attrs):
    """(ORT CUDA provider, direct call on CuPy arrays), as NumPy arrays."""
    feeds = {"sorted_sequence": cp.asarray(seq), "values": cp.asarray(values)}
    if sorter is not None:
        feeds["sorter"] = cp.asarray(sorter)
    sess = cuda_session(SearchSorted, {k: (v.dtype, list(v.shape)) for k, v in feeds.items()}, attrs=attrs or None)
    return cp.asnumpy(run_bound(sess, feeds)), cp.asnumpy(kernels.search_sorted(*feeds.values(), **attrs))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32, np.int64, np.uint8])
@pytest.mark.parametrize("right", [0, 1])
def test_searchsorted_on_gpu_matches_the_cpu_kernel(dtype, right):
    rng = np.random.default_rng(7)
    for seq_shape, values_shape in (((1000,), (3, 333)), ((4, 17), (4, 50)), ((1,), (9,)), ((0,), (5,)),
                                    ((2, 0), (2, 3)), ((100_000,), (200_000,))):
        seq = np.sort(rng.integers(0, 100, seq_shape), axis=-1).astype(dtype)
        values = rng.integers(-5, 105, values_shape).astype(dtype)
        want = SearchSorted.reference(seq, values, right=right)
        np.testing.assert_array_equal(kernels.search_sorted(seq, values, right=right), want)
        for got in _searchsorted_on_gpu(seq, values, right=right):
            np.testing.assert_array_equal(got, want)


def test_searchsorted_on_gpu_with_sorter_nan_and_unsorted_rows():
    rng = np.random.default_rng(8)
    seq = rng.standard_normal((3, 40)).astype(np.float32)  # unsorted: torch's bisection all the same
    seq[0, 5] = np.nan
    values = rng.standard_normal((3, 60)).astype(np.float32)
    values[1, :4] = np.nan
    sorter = np.argsort(seq, axis=-1)
    for s in (None, sorter):
        for side in ("left", "right"):
            want = SearchSorted.reference(seq, values, s, side=side)
            for got in _searchsorted_on_gpu(seq, values, s, side=side):
                np.testing.assert_array_equal(got, want)


def test_searchsorted_on_gpu_out_of_range_sorter_writes_minus_one():
    seq, values = np.array([1.0, 2.0, 3.0], np.float32), np.array([0.5, 2.5, 9.0], np.float32)
    for got in _searchsorted_on_gpu(seq, values, np.array([0, 7, 2], np.int64)):
        assert (got == -1).any() and ((got == -1) | ((got >= 0) & (got <= 3))).all()


# ---- Cholesky, CholeskyEx --------------------------------------------------------------------

def _spd(rng, shape, dtype):
    q, _ = np.linalg.qr(rng.standard_normal(shape))
    return ((q * rng.uniform(0.5, 2.0, shape[:-1])[..., None, :]) @ np.swapaxes(q, -1, -2)).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("upper", [0, 1])
@pytest.mark.parametrize("shape", [(4096, 3, 3), (64, 8, 8), (4, 64, 64), (1, 300, 300), (0, 4, 4), (2, 0, 0)])
def test_cholesky_on_gpu_matches_the_cpu_kernel(dtype, upper, shape):
    a = _spd(np.random.default_rng(sum(shape)), shape, dtype)
    want = kernels.cholesky(a, upper=upper)
    x = cp.asarray(a)
    sess = cuda_session(Cholesky, {"A": (a.dtype, list(shape))}, attrs={"upper": upper})
    tol = (2e-4 if dtype == np.float32 else 1e-11) * max(1, shape[-1])
    for got in (cp.asnumpy(run_bound(sess, {"A": x})), cp.asnumpy(kernels.cholesky(x, upper=upper)),
                cp.asnumpy(kernels.cholesky_ex(x, upper=upper)[0])):
        np.testing.assert_allclose(got, want, rtol=0, atol=tol)


def test_cholesky_on_gpu_info_and_nan_for_not_positive_definite():
    a = _spd(np.random.default_rng(0), (4, 5, 5), np.float64)
    a[2, 3, 3] = -50.0
    a[3, 0, 0] = np.nan
    x = cp.asarray(a)
    l, info = kernels.cholesky_ex(x)
    np.testing.assert_array_equal(cp.asnumpy(info), [0, 0, 4, 1])
    np.testing.assert_allclose(cp.asnumpy(l)[:2], kernels.cholesky(a[:2]), atol=1e-12)
    l = cp.asnumpy(kernels.cholesky(x))  # no error without a synchronization: NaN instead
    assert np.isnan(l[2:]).all() and np.isfinite(l[:2]).all()


# ---- Svd, Svdvals ----------------------------------------------------------------------------

def _run_all_bound(sess, x):
    """Runs with A on the GPU and every output left there; returns them on the host."""
    b = sess.io_binding()
    b.bind_input("A", "cuda", 0, x.dtype, x.shape, x.data.ptr)
    for o in sess.get_outputs():
        b.bind_output(o.name, "cuda")
    sess.run_with_iobinding(b)
    return [o.numpy() for o in b.get_outputs()]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(4096, 3, 3), (1024, 4, 4), (64, 8, 8), (8, 7, 3), (8, 3, 7), (2, 40, 40), (0, 3, 3),
                                   (2, 0, 3)])
@pytest.mark.parametrize("full", [1, 0])
def test_svd_on_gpu(dtype, shape, full):
    from test_svd import assert_svd

    a = np.random.default_rng(sum(shape)).standard_normal(shape).astype(dtype)
    sess = cuda_session(Svd, {"A": (a.dtype, list(shape))}, attrs={"full_matrices": full})
    u, s, vh = _run_all_bound(sess, cp.asarray(a))
    assert_svd(a, u, s, vh, full)
    vals = cuda_session(Svdvals, {"A": (a.dtype, list(shape))})
    np.testing.assert_allclose(_run_all_bound(vals, cp.asarray(a))[0], s, rtol=0,
                               atol=16 * max(shape[-2:]) * np.finfo(dtype).eps * max(1.0, np.abs(s).max(initial=0)))


def test_svd_on_gpu_nan_for_non_finite():
    a = np.random.default_rng(0).standard_normal((4, 5, 5))
    a[2, 1, 1] = np.nan
    a[3, 0, 0] = np.inf
    sess = cuda_session(Svd, {"A": (a.dtype, list(a.shape))})
    u, s, vh = _run_all_bound(sess, cp.asarray(a))  # no error without a synchronization: NaN instead
    assert np.isnan(s[2:]).all() and np.isnan(u[2:]).all() and np.isnan(vh[2:]).all()
    np.testing.assert_allclose(s[:2], kernels.svdvals(a[:2]), atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_svd_and_eigh_on_gpu_scale_a_matrix_of_subnormal_entries(dtype):
    """The largest entry subnormal: 2^-e is past the dtype's range, so it is applied in two factors (as on the CPU):
    the values as the CPU kernels', not inf."""
    a = (np.random.default_rng(3).standard_normal((2, 6, 6)) * np.finfo(dtype).tiny / 64).astype(dtype)
    a = (a + np.swapaxes(a, -1, -2)).astype(dtype)
    s = _run_all_bound(cuda_session(Svdvals, {"A": (a.dtype, list(a.shape))}), cp.asarray(a))[0]
    w = _run_all_bound(cuda_session(Eigvalsh, {"A": (a.dtype, list(a.shape))}), cp.asarray(a))[0]
    for got, want in ((s, kernels.svdvals(a)), (w, kernels.eigvalsh(a))):
        assert np.isfinite(got).all()
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-3 * np.abs(want).max())


# ---- Eigh ------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(4096, 3, 3), (1024, 4, 4), (256, 8, 8), (3, 1, 1), (2, 40, 40), (0, 3, 3),
                                   (2, 0, 0)])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_on_gpu_is_cupys_and_the_cpu_kernels(dtype, shape, uplo):
    """Eigenvalues as cupy.linalg.eigvalsh's (cuSOLVER's syevd) and the CPU kernel's; eigenvectors orthonormal with
    V diag(w) V^T = A and the CPU kernel's sign convention (test_eigh.assert_eigh); only the UPLO triangle read."""
    from test_eigh import assert_eigh

    a = np.random.default_rng(sum(shape)).standard_normal(shape).astype(dtype)
    sess = cuda_session(Eigh, {"A": (a.dtype, list(shape))}, attrs={"UPLO": uplo})
    w, v = _run_all_bound(sess, cp.asarray(a))
    assert_eigh(a, w, v, uplo)
    tol = 16 * max(shape[-1], 1) * np.finfo(dtype).eps * max(1.0, np.abs(w).max(initial=0))
    np.testing.assert_allclose(w, kernels.eigvalsh(a, UPLO=uplo), rtol=0, atol=tol)
    vals = cuda_session(Eigvalsh, {"A": (a.dtype, list(shape))}, attrs={"UPLO": uplo})
    np.testing.assert_allclose(_run_all_bound(vals, cp.asarray(a))[0], w, rtol=0, atol=tol)
    for b in range(min(3, int(np.prod(shape[:-2])))):
        if shape[-1] == 0:
            break
        want = cp.asnumpy(cp.linalg.eigvalsh(cp.asarray(a[b]), UPLO=uplo))
        np.testing.assert_allclose(w[b], want, rtol=0, atol=tol)


def test_eigh_on_gpu_nan_for_non_finite_in_the_triangle_read():
    a = np.random.default_rng(0).standard_normal((4, 5, 5))
    a[2, 1, 1] = np.nan
    a[3, 3, 0] = np.inf  # lower triangle: read with UPLO='L' only
    w, v = _run_all_bound(cuda_session(Eigh, {"A": (a.dtype, list(a.shape))}), cp.asarray(a))
    assert np.isnan(w[2:]).all() and np.isnan(v[2:]).all()
    np.testing.assert_allclose(w[:2], kernels.eigvalsh(a[:2]), atol=1e-12)
    w, v = _run_all_bound(cuda_session(Eigh, {"A": (a.dtype, list(a.shape))}, attrs={"UPLO": "U"}), cp.asarray(a))
    assert np.isnan(w[2]).all() and np.isfinite(w[3]).all()
    np.testing.assert_allclose(w[3], kernels.eigvalsh(a[3:], UPLO="U")[0], atol=1e-12)


# ---- Qr --------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(4096, 3, 3), (1024, 4, 4), (64, 8, 8), (8, 7, 3), (8, 3, 7), (2, 40, 40), (0, 3, 3),
                                   (2, 0, 3), (2, 3, 0)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_on_gpu_is_cupys_and_the_cpu_kernels(dtype, shape, mode):
    """cupy.linalg.qr (cuSOLVER's geqrf + orgqr) follows LAPACK's conventions as ours: the same factors, element-wise,
    for well-conditioned matrices; and the CPU kernel's to rounding, in a session and by direct call on CuPy arrays."""
    from test_qr import assert_like_torch, assert_qr, well_conditioned

    a = well_conditioned(np.random.default_rng(sum(shape)), shape, dtype)
    sess = cuda_session(Qr, {"A": (a.dtype, list(shape))}, attrs={"mode": mode})
    q, r = _run_all_bound(sess, cp.asarray(a))
    assert_qr(a, q, r, mode)
    assert_like_torch((q, r), kernels.qr(a, mode=mode), a)
    dq, dr = (cp.asnumpy(x) for x in kernels.qr(cp.asarray(a), mode=mode))
    assert_like_torch((dq, dr), (q, r), a)
    for b in range(min(3, int(np.prod(shape[:-2])))):
        if 0 in shape[-2:]:
            break
        want = cp.linalg.qr(cp.asarray(a[b]), mode=mode)
        want = (np.zeros((0,), dtype), cp.asnumpy(want)) if mode == "r" else tuple(cp.asnumpy(x) for x in want)
        assert_like_torch((q if mode == "r" else q[b], r[b]), want, a[b])


def test_qr_on_gpu_nan_spreads_no_error():
    a = np.random.default_rng(0).standard_normal((4, 5, 5))
    a[2, 1, 1] = np.nan
    a[3, 0, 0] = np.inf
    q, r = _run_all_bound(cuda_session(Qr, {"A": (a.dtype, list(a.shape))}), cp.asarray(a))
    assert not np.isfinite(q[2]).all() and not np.isfinite(r[3]).all()
    np.testing.assert_allclose(r[:2], kernels.qr(a[:2])[1], atol=1e-12)


# ---- SolveTriangular -------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("upper, left, unit", [(0, 1, 0), (1, 1, 1), (0, 0, 0), (1, 0, 1)])
@pytest.mark.parametrize("a_shape, b_shape", [((3, 3), (3, 2)), ((4, 1, 8, 8), (3, 8, 5)), ((200, 200), (200, 64)),
                                              ((0, 3, 3), (3, 2)), ((3, 3), (3, 0))])
def test_solve_triangular_on_gpu_matches_the_cpu_kernel(dtype, upper, left, unit, a_shape, b_shape):
    rng = np.random.default_rng(sum(a_shape) + sum(b_shape))
    n = a_shape[-1]
    a = (rng.standard_normal(a_shape) / np.sqrt(n) + 3 * np.eye(n)).astype(dtype)
    if not left:
        b_shape = b_shape[:-2] + (b_shape[-1], b_shape[-2])
    b = rng.standard_normal(b_shape).astype(dtype)
    attrs = dict(upper=upper, left=left, unitriangular=unit)
    want = kernels.solve_triangular(a, b, **attrs)
    sess = cuda_session(SolveTriangular, {"A": (a.dtype, list(a.shape)), "B": (b.dtype, list(b.shape))}, attrs=attrs)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    for got in (cp.asnumpy(run_bound(sess, {"A": cp.asarray(a), "B": cp.asarray(b)})),
                cp.asnumpy(kernels.solve_triangular(cp.asarray(a), cp.asarray(b), **attrs))):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)



# ---- Solve, SolveEx, Slogdet -----------------------------------------------------------------

_SOLVE_SHAPES = [((3, 3), (3, 2)), ((4, 1, 8, 8), (3, 8, 5)), ((2, 5, 5), (5,)), ((2, 5, 5), (2, 5)),
                 ((70, 70), (70, 3)), ((0, 3, 3), (3, 2)), ((3, 3), (3, 0))]


def _vector(a_shape, b_shape):
    return len(b_shape) == 1 or b_shape == a_shape[:-1]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("left, a_shape, b_shape", [(left, a, b) for left in (1, 0) for a, b in _SOLVE_SHAPES
                                                    if left or not _vector(a, b)])  # vectors: left=1 (torch's rule)
def test_solve_on_gpu_matches_the_cpu_kernel(dtype, left, a_shape, b_shape):
    rng = np.random.default_rng(sum(a_shape) + sum(b_shape))
    a = rng.standard_normal(a_shape).astype(dtype)
    if not left:
        b_shape = b_shape[:-2] + (b_shape[-1], b_shape[-2])
    b = rng.standard_normal(b_shape).astype(dtype)
    want = kernels.solve(a, b, left=left)
    tol = 1e-3 if dtype == np.float32 else 1e-9
    np.testing.assert_allclose(cp.asnumpy(kernels.solve(cp.asarray(a), cp.asarray(b), left=left)), want, rtol=tol,
                               atol=tol)


def test_solve_ex_and_slogdet_on_gpu_info_sign_and_inf():
    a = np.random.default_rng(0).standard_normal((4, 5, 5))
    a[1] = 0.0
    a[3, 2] = a[3, 0]  # equal rows (Solve's exact zero) and columns (Slogdet's, on A^T)
    a[3, :, 2] = a[3, :, 0]
    b = np.ones((4, 5, 2))
    x, info = kernels.solve_ex(cp.asarray(a), cp.asarray(b))
    np.testing.assert_array_equal(cp.asnumpy(info), kernels.solve_ex(a, b)[1])
    assert not np.isfinite(cp.asnumpy(x)[1]).all()
    assert not np.isfinite(cp.asnumpy(kernels.solve(cp.asarray(a), cp.asarray(b)))[1]).all()  # no error on CUDA
    for got, want in zip(kernels.slogdet(cp.asarray(a)), kernels.slogdet(a)):
        np.testing.assert_allclose(cp.asnumpy(got), want, rtol=1e-12)
    c = np.random.default_rng(1).standard_normal((2, 6, 6))
    c[1, :, 2] = c[1, :, 4] = 0.0  # X A = B: A's own first zero pivot (3), as torch's, not A^T's (5)
    xc, infoc = kernels.solve_ex(cp.asarray(c), cp.asarray(np.ones((2, 3, 6))), left=0)
    np.testing.assert_array_equal(cp.asnumpy(infoc), [0, 3])
    np.testing.assert_allclose(cp.asnumpy(xc)[0], kernels.solve(c[0], np.ones((3, 6)), left=0), rtol=1e-9)
    sign, logabs = kernels.slogdet(cp.asarray(np.zeros((2, 0, 0))))
    np.testing.assert_array_equal(cp.asnumpy(sign), [1, 1])
    np.testing.assert_array_equal(cp.asnumpy(logabs), [0, 0])
