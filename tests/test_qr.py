"""Qr (torch.linalg.qr): torch's factors element-wise (LAPACK's geqrf/orgqr conventions) to a small multiple of
max(M, N) * eps for well-conditioned input, reconstruction and orthogonality to a small multiple of max(M, N) *
eps for any input, torch's shapes in each mode, torch's behaviour on NaN/Inf, clear errors; in a session, by
direct call and as a torch op (OpInfo samples, exporters, the plain library: test_qr_paths.py)."""
import numpy as np
import pytest

import ortcustom
from ortcustom import kernels
from ortcustom.ops import Qr

from helpers import InvalidArgument, session

torch = pytest.importorskip("torch")
import ortcustom.torch_ops  # noqa: E402,F401

DOM = ortcustom.Domain("ortcustom").add(Qr)
EPS = {np.float32: np.finfo(np.float32).eps, np.float64: np.finfo(np.float64).eps}
MODES = ("reduced", "complete", "r")


def run(a, mode="reduced"):
    sess = session(Qr, DOM, {"A": (a.dtype, None)}, attrs={"mode": mode})
    return tuple(sess.run(None, {"A": a}))


def every_path(a, mode):
    """(Q, R) from a session, a direct call and the torch op."""
    return [run(a, mode), kernels.qr(a, mode=mode),
            tuple(t.numpy() for t in torch.ops.ortcustom.qr(torch.from_numpy(a), mode))]


def torch_qr(a, mode):
    return tuple(t.numpy() for t in torch.linalg.qr(torch.from_numpy(a), mode=mode))


def well_conditioned(rng, shape, dtype):
    """Matrices with singular values in [1, 2] and random singular vectors: cond <= 2, entries of both signs."""
    m, n = shape[-2:]
    k = min(m, n)
    u, _ = np.linalg.qr(rng.standard_normal(shape[:-2] + (m, m)))
    v, _ = np.linalg.qr(rng.standard_normal(shape[:-2] + (n, n)))
    s = rng.uniform(1, 2, shape[:-2] + (k,))
    return ((u[..., :, :k] * s[..., None, :]) @ np.swapaxes(v[..., :, :k], -1, -2)).astype(dtype)


def assert_qr(a, q, r, mode, c=8.0):
    """torch's shapes and dtype; R exactly zero below the diagonal; Q's columns orthonormal and Q R = A to
    c max(M, N) eps (norm-wise)."""
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    rows = m if mode == "complete" else k
    assert r.shape == batch + (rows, n) and r.dtype == a.dtype
    assert q.dtype == a.dtype
    if mode == "r":
        assert q.shape == (0,)
        return
    assert q.shape == batch + (m, m if mode == "complete" else k)
    assert not np.tril(r, -1).any()
    eps = EPS[a.dtype.type]
    q64, r64, a64 = q.astype(np.float64), r.astype(np.float64), a.astype(np.float64)
    off = np.abs(np.swapaxes(q64, -1, -2) @ q64 - np.eye(q.shape[-1])).max(initial=0)
    assert off <= c * max(m, n, 1) * eps, off / eps
    err = np.linalg.norm(q64 @ r64 - a64, axis=(-2, -1)) if a.size else np.zeros(1)
    norm = np.linalg.norm(a64, axis=(-2, -1)) if a.size else np.zeros(1)
    assert (err <= c * max(m, n) * eps * norm).all(), (err / np.maximum(norm, 1e-300)).max() / eps


def assert_like_torch(got, want, a, c=32.0):
    """Element-wise: Q to c max(M, N) eps, R to c max(M, N) eps |A|_2 (the factors of a well-conditioned A)."""
    eps = EPS[a.dtype.type]
    m, n = a.shape[-2:]
    scale = max(np.linalg.norm(a.astype(np.float64), 2, axis=(-2, -1)).max(initial=0), 1.0) if a.size else 1.0
    for g, w, s in zip(got, want, (1.0, scale)):
        assert g.shape == w.shape
        d = np.abs(g.astype(np.float64) - w).max(initial=0)
        assert d <= c * max(m, n) * eps * s, (d / eps / s)


# kernels/cpu/qr.cpp's paths: square up to 8 unrolled; rows as vectors up to 256 columns (Q's by rows up to 256
# columns, a tall matrix's complete Q by the blocked products: (300, 70)); blocked past 256 columns ((70, 300),
# (280, 260): split across tasks alone), past 512 KiB ((2, 1100, 130)) and for tall narrow rows ((100, 3)).
SHAPES = [(1, 1), (3, 3), (4, 4), (1000, 3, 3), (64, 4, 4), (9, 8, 8), (2, 3, 5, 5), (7, 2, 2), (7, 3), (3, 7),
          (4, 2, 9), (5, 9, 2), (1, 6), (6, 1), (3, 17, 17), (2, 65, 40), (40, 65), (130, 130), (2, 100, 100),
          (70, 300), (300, 70), (280, 260), (2, 1100, 130), (100, 3), (3, 40, 33)]
EMPTY = [(0, 3, 3), (2, 0, 0), (2, 0, 3), (2, 3, 0), (3, 0), (0, 4, 2), (0, 0)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES)
def test_qr_every_path_is_torchs(dtype, shape):
    rng = np.random.default_rng(sum(shape))
    a = well_conditioned(rng, shape, dtype)
    for mode in MODES:
        want = torch_qr(a, mode)
        for q, r in every_path(a, mode):
            assert_qr(a, q, r, mode)
            assert_like_torch((q, r), want, a)
        q, r = Qr.reference(a, mode=mode)  # numpy's LAPACK: the same factors
        assert_like_torch((q, r), want, a)


@pytest.mark.parametrize("shape", EMPTY)
def test_empty_matrices_and_batches_have_torchs_shapes_and_values(shape):
    a = np.zeros(shape, np.float32)
    for mode in MODES:
        want = torch_qr(a, mode)
        for got in every_path(a, mode) + [Qr.reference(a, mode=mode)]:
            assert [x.shape for x in got] == [x.shape for x in want]
            for g, w in zip(got, want):
                np.testing.assert_array_equal(g, w)  # 'complete' with N = 0: Q the identity


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(2, 2), (4, 4), (8, 8), (9, 9), (12, 5), (5, 12), (70, 70)])
def test_random_normal_input_matches_torch(dtype, shape):
    """Plain random matrices (cond up to a few hundred): still torch's factors, within cond times the bound."""
    a = np.random.default_rng(shape[0] * 7 + shape[1]).standard_normal((3,) + shape).astype(dtype)
    cond = np.linalg.cond(a.astype(np.float64)).max() if shape[0] == shape[1] else 10
    for mode in ("reduced", "complete"):
        got = kernels.qr(a, mode=mode)
        assert_qr(a, *got, mode)
        assert_like_torch(got, torch_qr(a, mode), a, c=8 * cond)


def test_lapacks_sign_conventions():
    """dlarfg: R's diagonal entry is -sign(alpha) ||x||, positive for alpha = 0 as for alpha > 0 (so -||x||),
    and a column already zero below the diagonal is left alone (tau = 0: R = A there, Q = I, whatever alpha's
    sign); torch's results exactly where no arithmetic happens."""
    tri = np.triu(np.random.default_rng(1).standard_normal((3, 5, 5)))
    tri[0, 2, 2] = 0.0
    for mode in ("reduced", "complete"):
        for q, r in every_path(tri, mode):
            np.testing.assert_array_equal(r, tri)
            np.testing.assert_array_equal(q, np.broadcast_to(np.eye(5), q.shape))
            np.testing.assert_array_equal(r, torch_qr(tri, mode)[1])
    for shape in ((150, 120), (300, 270)):  # the rows path and the blocked one: every tau 0 too
        big = np.triu(np.random.default_rng(2).standard_normal(shape))
        for mode in ("reduced", "complete"):
            q, r = kernels.qr(big, mode=mode)
            np.testing.assert_array_equal(r, big[: r.shape[0]])
            np.testing.assert_array_equal(q, np.eye(shape[0], q.shape[1]))
    a = np.array([[[0.0, 1.0], [1.0, 0.0]], [[2.0, 1.0], [1.0, 3.0]], [[-2.0, 1.0], [1.0, 3.0]]])
    q, r = kernels.qr(a)
    assert r[0, 0, 0] < 0 and r[1, 0, 0] < 0 and r[2, 0, 0] > 0  # -sign(alpha) ||x||, sign(0) = +
    assert_like_torch((q, r), torch_qr(a, "reduced"), a)
    z = np.zeros((2, 4, 3))  # all zero: every tau 0, Q = I, R = 0 (torch's)
    for mode in ("reduced", "complete"):
        q, r = kernels.qr(z, mode=mode)
        np.testing.assert_array_equal(q, np.broadcast_to(np.eye(4, q.shape[-1]), q.shape))
        assert not r.any()
        for g, w in zip((q, r), torch_qr(z, mode)):
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(8, 8), (60, 60), (40, 25), (25, 40), (200, 200)])
def test_rank_deficient(dtype, shape):
    """Rank k/3: the factors are not unique, but Q stays orthonormal and Q R = A to eps."""
    rng = np.random.default_rng(shape[0])
    m, n = shape
    r = max(1, min(shape) // 3)
    a = (rng.standard_normal((m, r)) @ rng.standard_normal((r, n))).astype(dtype)
    for mode in ("reduced", "complete"):
        assert_qr(a, *run(a, mode), mode)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_large_badly_conditioned_and_scaled(dtype):
    """Householder QR is backward stable whatever the condition (1e6 float, 1e14 double); entries near the overflow
    and underflow thresholds are rescaled in the norms, not squared out of range (torch's factors still)."""
    rng = np.random.default_rng(7)
    cond = 1e6 if dtype == np.float32 else 1e14
    for shape in ((300, 300), (2, 90, 70), (1, 520, 515)):
        m, n = shape[-2:]
        k = min(m, n)
        u, _ = np.linalg.qr(rng.standard_normal(shape[:-2] + (m, k)))
        v, _ = np.linalg.qr(rng.standard_normal(shape[:-2] + (n, k)))
        a = ((u * np.logspace(0, -np.log10(cond), k)) @ np.swapaxes(v, -1, -2)).astype(dtype)
        for mode in ("reduced", "complete"):
            assert_qr(a, *kernels.qr(a, mode=mode), mode)
    for scale in (np.finfo(dtype).max / 64, np.finfo(dtype).tiny * 16, np.finfo(dtype).smallest_subnormal * 2**20):
        a = well_conditioned(rng, (3, 6, 5), np.float64)
        a = (a / np.abs(a).max() * scale).astype(dtype)
        q, r = kernels.qr(a)
        assert np.isfinite(q).all() and np.isfinite(r).all()
        # subnormal entries carry ~20 bits: the input itself is that coarse
        tol = 1e-4 if scale < np.finfo(dtype).tiny else 100 * EPS[dtype]
        np.testing.assert_allclose(q, torch_qr(a, "reduced")[0], atol=tol)
        np.testing.assert_allclose(q @ (r / scale), a / scale, atol=tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nan_and_inf_spread_as_in_torch_no_error(dtype):
    """torch.linalg.qr does not raise on NaN/Inf (it returns non-finite factors): neither does Qr. The matrix holding
    one gets non-finite factors; the others are unaffected; the session goes on."""
    a = well_conditioned(np.random.default_rng(0), (4, 5, 3), dtype)
    a[1, 2, 1] = np.nan
    a[3, 0, 0] = np.inf
    tq, tr = torch_qr(a, "reduced")  # torch: no error
    assert not np.isfinite(tq[1]).all() and not np.isfinite(tq[3]).all()
    clean = kernels.qr(a[[0, 2]])
    for q, r in every_path(a, "reduced"):
        for b in (1, 3):
            assert not np.isfinite(q[b]).all() and not np.isfinite(r[b]).all()
        np.testing.assert_array_equal(q[[0, 2]], clean[0])
        np.testing.assert_array_equal(r[[0, 2]], clean[1])
    q, r = Qr.reference(a)
    assert not np.isfinite(r[1]).all() and np.isfinite(r[0]).all()


@pytest.mark.parametrize("shape", [(3,), ()])
def test_rank_below_two_is_a_clear_error(shape):
    x = np.ones(shape, np.float32)
    sess = session(Qr, DOM, {"A": (np.float32, None)})
    with pytest.raises(InvalidArgument, match=r"Qr \(node 'n0'\): input A has shape .*expected \(\.\.\., M, N\)"):
        sess.run(None, {"A": x})
    np.testing.assert_array_equal(sess.run(None, {"A": np.eye(2, dtype=np.float32)})[0], np.eye(2))  # it goes on
    with pytest.raises(ValueError, match=r"Qr: input A has shape .*expected \(\.\.\., M, N\)"):
        kernels.qr(x)
    with pytest.raises(ValueError, match="Qr: input A"):
        torch.ops.ortcustom.qr(torch.from_numpy(x))
    with pytest.raises(ValueError, match="Qr: input A"):
        Qr.reference(x)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):  # torch refuses it too
        torch.linalg.qr(torch.from_numpy(x))


@pytest.mark.parametrize("mode", ["full", "R", "", "economic"])
def test_a_bad_mode_is_refused_naming_op_and_attribute(mode):
    import onnxruntime as ort
    from ortcustom.testing import make_model

    from helpers import CPU

    want = rf"attribute mode={mode!r} is invalid: mode can only be 'reduced', 'complete' or 'r', got {mode!r}"
    model = make_model(Qr, DOM, {"A": (np.float32, [3, 3])}, attrs={"mode": mode})
    with pytest.raises(Exception, match=r"Qr \(node 'n0'\): " + want.replace("(", r"\(")) as e:
        ort.InferenceSession(model.SerializeToString(), ortcustom.session_options(DOM), providers=CPU)
    a = np.eye(3, dtype=np.float32)
    with pytest.raises(ValueError, match=r"Qr: " + want):
        kernels.qr(a, mode=mode)
    with pytest.raises(ValueError, match=r"ortcustom::qr: Qr " + want):
        torch.ops.ortcustom.qr(torch.from_numpy(a), mode)
    with pytest.raises(ValueError, match="mode can only be"):
        Qr.reference(a, mode=mode)
    with pytest.raises(RuntimeError, match="unrecognized mode"):  # torch refuses it too
        torch.linalg.qr(torch.from_numpy(a), mode=mode)
    assert "Qr" in str(e.value)


def test_only_some_outputs_used_and_symbolic_shapes():
    """A node that uses R alone, or Q alone: what it uses is the full result's; the model's output shapes
    from the declaration (mode 'r': Q of shape (0,))."""
    import onnxruntime as ort
    from ortcustom.testing import make_model

    from helpers import CPU

    a = np.random.default_rng(3).standard_normal((5, 6, 4))
    q, r = kernels.qr(a)
    for mode, shapes in (("reduced", [["b", 6, 4], ["b", 4, 4]]), ("complete", [["b", 6, 6], ["b", 6, 4]]),
                         ("r", [[0], ["b", 4, 4]])):
        model = make_model(Qr, DOM, {"A": (np.float64, ["b", 6, 4])}, attrs={"mode": mode})
        sess = ort.InferenceSession(model.SerializeToString(), ortcustom.session_options(DOM), providers=CPU)
        assert [o.shape for o in sess.get_outputs()] == shapes
        np.testing.assert_array_equal(sess.run(["R"], {"A": a})[0][:, :4], r)
        if mode == "reduced":
            np.testing.assert_array_equal(sess.run(["Q"], {"A": a})[0], q)
        if mode == "r":
            assert sess.run(["Q"], {"A": a})[0].shape == (0,)


@pytest.mark.parametrize("shape", [(4, 200, 270), (4, 560, 400)])  # narrow panels; wide ones (past 1.5 MiB)
def test_large_single_matrix_path_equals_the_batch_path(shape):
    """One large matrix is split across tasks (panels' trailing columns, Q's columns); the same matrix in a batch
    of 4 is done by one task: the same arithmetic per column, so the same bits."""
    a = np.random.default_rng(11).standard_normal(shape)
    for mode in ("reduced", "complete"):
        q1, r1 = kernels.qr(a[1], mode=mode)
        qb, rb = kernels.qr(a, mode=mode)
        np.testing.assert_array_equal(q1, qb[1])
        np.testing.assert_array_equal(r1, rb[1])
        assert_qr(a[1], q1, r1, mode)
    q1, r1 = run(np.ascontiguousarray(a[2].T))  # wide, in a session (ORT's pool)
    assert_qr(a[2].T, q1, r1, "reduced")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(12, 12), (45, 40), (40, 45), (130, 100), (260, 200)])
def test_reflectors_that_leave_a_column_alone_then_one_that_does_not(dtype, shape):
    """Upper triangular but for column j (dense below the diagonal): the reflectors before j are H = I (tau = 0:
    the rows path neither updates nor sums for them), reflector j is not and reaches the columns after it; a zero
    column after j gives tau = 0 again in the middle. torch's factors within the condition's bound."""
    m, n = shape
    rng = np.random.default_rng(m + n)
    a = np.triu(rng.standard_normal((m, n))) + 4 * np.eye(m, n)
    j = min(m, n) // 3
    a[j:, j] = rng.standard_normal(m - j)
    a[:, n - 1] = 0
    a = a.astype(dtype)
    for mode in MODES:
        want = torch_qr(a, mode)
        for q, r in every_path(a, mode):
            assert_qr(a, q, r, mode)
            assert_like_torch((q, r), want, a, c=32 * np.linalg.cond(a.astype(np.float64)[:, : n - 1]))


@pytest.mark.parametrize("shape", [(5, 5), (9, 30, 20), (20, 30), (150, 20), (2, 260, 200), (300, 270), (100, 3),
                                   (2, 1100, 130)])
def test_r_is_the_same_in_every_mode(shape):
    """geqrf's R whatever Q is asked for (torch's are one call's): each path's R is the same bits in every mode,
    including the rows path's tall matrices whose complete Q is the blocked path's."""
    a = np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32)
    k = min(shape[-2:])
    rs = [kernels.qr(a, mode=mode)[1] for mode in MODES]
    for r in rs[1:]:
        np.testing.assert_array_equal(r[..., :k, :], rs[0][..., :k, :])
