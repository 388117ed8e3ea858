"""Eigh and Eigvalsh (torch.linalg.eigh, torch.linalg.eigvalsh): eigenvalues ascending and numpy's to a small
multiple of N eps |A|, eigenvectors orthonormal with V diag(w) V^T = A (the sign convention: each column's
largest entry positive), only the UPLO triangle read, torch's shapes and errors, in a session, by direct call
and as a torch op (the OpInfo samples and exporters: test_eigh_paths.py)."""
import numpy as np
import pytest

import ortcustom
from ortcustom import kernels
from ortcustom.ops import Eigh, Eigvalsh

from helpers import InvalidArgument, session

torch = pytest.importorskip("torch")
import ortcustom.torch_ops  # noqa: E402,F401

DOM = ortcustom.Domain("ortcustom").add(Eigh, Eigvalsh)
EPS = {np.float32: np.finfo(np.float32).eps, np.float64: np.finfo(np.float64).eps}


def run(op, a, **attrs):
    sess = session(op, DOM, {"A": (a.dtype, None)}, attrs=attrs or None)
    out = sess.run(None, {"A": a})
    return out[0] if op is Eigvalsh else tuple(out)


def mirrored(a, uplo):
    """The symmetric matrix that A's `uplo` triangle stands for, in float64."""
    t = (np.tril(a) if uplo == "L" else np.triu(a)).astype(np.float64)
    return t + np.swapaxes(np.tril(t, -1) if uplo == "L" else np.triu(t, 1), -1, -2)


def assert_values_agree(a, w_vectors, w_values, uplo):
    """Eigh's values and Eigvalsh's: Eigh's from its QL iteration (below n = 32) or its divide and
    conquer (the secular roots), Eigvalsh's from the root-free QL (below n = 256) or its own divide and conquer,
    within 4 n eps ||A|| of each other (each within its bound of the true values)."""
    n = a.shape[-1]
    if a.size == 0:
        np.testing.assert_array_equal(w_values, w_vectors)
        return
    norm = np.linalg.norm(mirrored(a, uplo), axis=(-2, -1))
    gap = np.abs(w_values.astype(np.float64) - w_vectors.astype(np.float64)).max(axis=-1)
    assert (gap <= 4 * n * EPS[a.dtype.type] * norm).all(), (gap / norm).max()


def assert_eigh(a, w, v, uplo, c=8.0):
    n = a.shape[-1]
    assert w.shape == a.shape[:-1] and v.shape == a.shape and w.dtype == v.dtype == a.dtype
    if a.size == 0:
        return
    eps = EPS[a.dtype.type]
    s = mirrored(a, uplo)
    w64, v64 = w.astype(np.float64), v.astype(np.float64)
    norm = np.maximum(np.linalg.norm(s, axis=(-2, -1)), np.finfo(np.float64).tiny)
    assert (np.diff(w64, axis=-1) >= 0).all()  # ascending
    want = np.linalg.eigvalsh(s)
    assert (np.abs(w64 - want).max(axis=-1) <= c * n * eps * norm).all(), np.abs(w64 - want).max()
    off = np.abs(np.swapaxes(v64, -1, -2) @ v64 - np.eye(n)).max()
    assert off <= c * n * eps, off
    rec = (v64 * w64[..., None, :]) @ np.swapaxes(v64, -1, -2)
    err = np.linalg.norm(rec - s, axis=(-2, -1))
    assert (err <= c * n * eps * norm).all(), (err / norm).max()
    resid = np.linalg.norm(s @ v64 - v64 * w64[..., None, :], axis=-2)  # ||A v - lambda v|| per eigenpair
    assert (resid <= c * n * eps * norm[..., None]).all()
    # the documented sign: each column's largest-magnitude entry (the first of equal ones) is positive
    flat = v64.reshape(-1, n, n)
    idx = np.abs(flat).argmax(axis=-2)
    assert (np.take_along_axis(flat, idx[:, None, :], axis=-2) > 0).all()


SHAPES = [(1, 1), (2, 2), (3, 3), (4, 4), (1000, 3, 3), (64, 4, 4), (9, 8, 8), (2, 3, 5, 5), (3, 17, 17),
          (2, 40, 40), (2, 65, 65), (130, 130), (0, 3, 3), (2, 0, 0), (0, 0)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES)
def test_eigh_every_path(dtype, shape):
    a = np.random.default_rng(sum(shape)).standard_normal(shape).astype(dtype)
    for uplo in ("L", "U"):
        got = [run(Eigh, a, UPLO=uplo), kernels.eigh(a, UPLO=uplo),
               tuple(t.numpy() for t in torch.ops.ortcustom.eigh(torch.from_numpy(a), uplo))]
        for w, v in got:
            assert_eigh(a, w, v, uplo)
        want = torch.linalg.eigh(torch.from_numpy(a), UPLO=uplo)
        assert [x.shape for x in got[0]] == [tuple(x.shape) for x in want]
        if a.size:
            np.testing.assert_allclose(got[0][0], want[0].numpy(), rtol=0,
                                       atol=16 * shape[-1] * EPS[dtype] * np.abs(want[0].numpy()).max())
        for w in (run(Eigvalsh, a, UPLO=uplo), kernels.eigvalsh(a, UPLO=uplo),
                  torch.ops.ortcustom.eigvalsh(torch.from_numpy(a), uplo).numpy()):
            assert_values_agree(a, got[0][0], w, uplo)  # the vectors not formed
        if a.size:  # the references are numpy's
            np.testing.assert_allclose(Eigvalsh.reference(a, UPLO=uplo), got[0][0], rtol=0,
                                       atol=16 * shape[-1] * EPS[dtype] * np.abs(got[0][0]).max())
            w_ref, v_ref = Eigh.reference(a, UPLO=uplo)
            big = np.take_along_axis(v_ref, np.abs(v_ref).argmax(axis=-2)[..., None, :], axis=-2)
            assert_eigh(a, w_ref, (v_ref * np.sign(big)).astype(dtype), uplo, c=16)


@pytest.mark.parametrize("op", [Eigh, Eigvalsh])
def test_only_the_uplo_triangle_is_read(op):
    """The other triangle (garbage, even NaN) changes nothing."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((6, 7, 7))
    for uplo, other in (("L", np.triu_indices(7, 1)), ("U", np.tril_indices(7, -1))):
        base = run(op, a, UPLO=uplo)
        b = a.copy()
        b[:, other[0], other[1]] = rng.standard_normal((6, len(other[0]))) * 1e6
        c = a.copy()
        c[:, other[0], other[1]] = np.nan
        for x in (b, c):
            got = run(op, x, UPLO=uplo)
            for g, want in zip(got if op is Eigh else [got], base if op is Eigh else [base]):
                np.testing.assert_array_equal(g, want)
    assert not np.array_equal(run(Eigvalsh, a, UPLO="L"), run(Eigvalsh, a, UPLO="U"))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [6, 40, 300])
def test_a_matrix_of_subnormal_entries_is_scaled_not_overflowed(dtype, n):
    """The largest entry subnormal: its power-of-two scaling 2^-e is past double's range for float64 (it was taken
    as inf and the QL did not converge: an error); the QL, divide and conquer and (eigvalsh from 256) its values'
    divide and conquer: torch's values, the vectors orthonormal."""
    rng = np.random.default_rng(n)
    for scale in (np.finfo(dtype).tiny / 64, np.finfo(dtype).smallest_subnormal * 1000):
        a = rng.standard_normal((n, n))
        a = ((a + a.T) * scale).astype(dtype)
        want = torch.linalg.eigvalsh(torch.from_numpy(a)).numpy()
        w, v = kernels.eigh(a)
        for got in (w, kernels.eigvalsh(a)):
            assert np.isfinite(got).all()
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-2 * np.abs(want).max())
        np.testing.assert_allclose(v.T @ v, np.eye(n), atol=1e-4)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ill_conditioned_scaled_and_repeated(dtype):
    """Eigenvalues spread over 1e12 (each to eps |A|), entries near overflow/underflow (scaled, not squared),
    repeated eigenvalues (any orthonormal basis of their subspace), a diagonal and a zero matrix."""
    rng = np.random.default_rng(9)
    for n, vals in ((40, np.logspace(0, -12, 40)), (5, [2.0, 2.0, 2.0, -1.0, -1.0]), (8, [1.0] * 8),
                    (6, [0.0] * 3 + [1e-3, 5.0, 5.0])):
        q, _ = np.linalg.qr(rng.standard_normal((3, n, n)))
        a = ((q * np.asarray(vals)) @ np.swapaxes(q, -1, -2)).astype(dtype)
        for uplo in ("L", "U"):
            w, v = run(Eigh, a, UPLO=uplo)
            assert_eigh(a, w, v, uplo)
    for a in (np.diag([3.0, -1.0, 2.0]), np.zeros((4, 4)), np.ones((5, 5)), -np.eye(4)[:, ::-1]):
        a = a.astype(dtype)
        w, v = run(Eigh, a)
        assert_eigh(a, w, v, "L")
    np.testing.assert_array_equal(run(Eigvalsh, np.diag([3.0, -1.0, 2.0])), [-1.0, 2.0, 3.0])
    for scale in (np.finfo(dtype).max / 8, np.finfo(dtype).tiny * 1024):
        a = rng.standard_normal((3, 6, 6))
        a = (a + np.swapaxes(a, -1, -2)) / 2
        a = (a / np.abs(a).max() * scale).astype(dtype)
        w = kernels.eigvalsh(a)
        assert np.isfinite(w).all() and np.abs(w).max() > 0
        np.testing.assert_allclose(w / scale, np.linalg.eigvalsh(a.astype(np.float64) / scale), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [3, 8, 40, 70])
def test_eigvalsh_where_a_sweep_starts_on_its_shift(dtype, n):
    """Eigvalsh's QL step divides by r p; a sweep whose shift equals T's bottom entry starts at p = 0 and is
    redone the careful way. T: zeros on the diagonal but a -1 at the bottom, couplings 1 (its first shift is
    exactly -1), alone and mixed with ordinary matrices in a batch of 34 (whose tasks run two matrices' QLs
    side by side): each matrix's values are numpy's within 4 n eps ||A||, and the same bits as alone."""
    t = np.diag(np.ones(n - 1), 1) + np.diag(np.ones(n - 1), -1)
    t[-1, -1] = -1
    rng = np.random.default_rng(n)
    a = rng.standard_normal((34, n, n))
    a = (a + np.swapaxes(a, -1, -2)) / 2
    a[::3] = t
    a = a.astype(dtype)
    want = np.linalg.eigvalsh(a.astype(np.float64))
    norm = np.linalg.norm(a.astype(np.float64), axis=(-2, -1))
    for got in (kernels.eigvalsh(a), run(Eigvalsh, a)):
        assert (np.abs(got - want).max(axis=-1) <= 4 * n * EPS[dtype] * norm).all()
        for i in (0, 1, 3, 33):
            np.testing.assert_array_equal(got[i], kernels.eigvalsh(a[i]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nan_and_inf_are_errors_naming_op_node_and_batch_index(dtype):
    a = np.random.default_rng(0).standard_normal((4, 3, 3)).astype(dtype)
    a[2, 1, 1] = np.nan
    a[3, 2, 0] = np.inf
    for op in (Eigh, Eigvalsh):
        sess = session(op, DOM, {"A": (a.dtype, None)})
        with pytest.raises(InvalidArgument, match=rf"{op.name} \(node 'n0'\): input A: the matrix at batch index 2 "
                                                  r"holds a NaN or an infinity in its L triangle"):
            sess.run(None, {"A": a})
        got = sess.run(None, {"A": a[:2]})[0]  # the session survives
        if op is Eigvalsh:
            np.testing.assert_array_equal(got, kernels.eigvalsh(a[:2]))
        else:
            assert_values_agree(a[:2], got, kernels.eigvalsh(a[:2]), "L")
        with pytest.raises(ValueError, match=rf"{op.name}: .*batch index 2 holds a NaN"):
            op.reference(a)
    with pytest.raises(ValueError, match=r"Eigh: input A: the matrix at batch index 0 holds a NaN or an infinity"):
        kernels.eigh(a[3:])
    np.testing.assert_array_equal(kernels.eigh(a[3:], UPLO="U")[0].shape, (1, 3))  # the inf is not in U
    with pytest.raises(ValueError, match="batch index 2"):
        torch.ops.ortcustom.eigvalsh(torch.from_numpy(a), "L")
    with pytest.raises(Exception, match="failed to converge"):  # torch raises too
        torch.linalg.eigvalsh(torch.from_numpy(a))


@pytest.mark.parametrize("shape", [(3,), (), (3, 4), (2, 5, 4)])
def test_bad_shapes_are_clear_errors(shape):
    for op in (Eigh, Eigvalsh):
        sess = session(op, DOM, {"A": (np.float32, None)})
        with pytest.raises(InvalidArgument, match=rf"{op.name} \(node 'n0'\): input A has shape .*\(\.\.\., N, N\)"):
            sess.run(None, {"A": np.ones(shape, np.float32)})
        with pytest.raises(ValueError, match=rf"{op.name}: input A has shape"):
            op.reference(np.ones(shape, np.float32))


@pytest.mark.parametrize("uplo", ["X", "", "LU", "lower"])
def test_a_bad_uplo_is_refused_naming_op_and_attribute(uplo):
    import onnxruntime as ort
    from ortcustom.testing import make_model

    from helpers import CPU

    want = rf"attribute UPLO={uplo!r} is invalid: UPLO can only be 'L' or 'U' \(or lowercase\), got {uplo!r}"
    a = np.eye(3, dtype=np.float32)
    for op, call, top in ((Eigh, kernels.eigh, torch.ops.ortcustom.eigh),
                          (Eigvalsh, kernels.eigvalsh, torch.ops.ortcustom.eigvalsh)):
        model = make_model(op, DOM, {"A": (np.float32, [3, 3])}, attrs={"UPLO": uplo})
        with pytest.raises(Exception, match=rf"{op.name} \(node 'n0'\): " + want):
            ort.InferenceSession(model.SerializeToString(), ortcustom.session_options(DOM), providers=CPU)
        with pytest.raises(ValueError, match=rf"{op.name}: " + want):
            call(a, UPLO=uplo)
        with pytest.raises(ValueError, match=rf"ortcustom::{op.name.lower()}: {op.name} " + want):
            top(torch.from_numpy(a), uplo)
        with pytest.raises(ValueError, match="UPLO can only be"):
            op.reference(a, UPLO=uplo)
        # without Python (ORT loading the plain library) the kernel's create refuses it itself
        so = ort.SessionOptions()
        so.register_custom_ops_library(ortcustom.get_library_path())
        with pytest.raises(Exception, match=rf"{op.name} \(node 'n0'\): attribute UPLO can only be 'L' or 'U' "
                                            rf"\(or lowercase\), got {uplo!r}"):
            ort.InferenceSession(model.SerializeToString(), so, providers=CPU)
    with pytest.raises(RuntimeError, match="Expected UPLO argument to be 'L' or 'U'"):  # torch refuses it too
        torch.linalg.eigh(torch.from_numpy(a), UPLO=uplo)


def test_lowercase_uplo_is_accepted_as_torch_does():
    a = np.random.default_rng(8).standard_normal((3, 4, 4))
    for low, up in (("l", "L"), ("u", "U")):
        want = torch.linalg.eigvalsh(torch.from_numpy(a), UPLO=low).numpy()
        for op in (Eigh, Eigvalsh):
            got, base = run(op, a, UPLO=low), run(op, a, UPLO=up)
            for g, b in zip(got if op is Eigh else [got], base if op is Eigh else [base]):
                np.testing.assert_array_equal(g, b)
        np.testing.assert_allclose(run(Eigvalsh, a, UPLO=low), want, atol=1e-12)
        np.testing.assert_array_equal(Eigvalsh.reference(a, UPLO=low), Eigvalsh.reference(a, UPLO=up))


def test_only_some_outputs_used():
    from ortcustom.testing import make_model
    import onnxruntime as ort
    from helpers import CPU

    a = np.random.default_rng(3).standard_normal((5, 6, 6))
    model = make_model(Eigh, DOM, {"A": (np.float64, ["b", 6, 6])}, attrs={"UPLO": "U"})
    sess = ort.InferenceSession(model.SerializeToString(), ortcustom.session_options(DOM), providers=CPU)
    assert [o.shape for o in sess.get_outputs()] == [["b", 6], ["b", 6, 6]]
    w, v = kernels.eigh(a, UPLO="U")
    np.testing.assert_array_equal(sess.run(["eigenvalues"], {"A": a})[0], w)
    np.testing.assert_array_equal(sess.run(["eigenvectors"], {"A": a})[0], v)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_results_do_not_depend_on_the_thread_count(dtype):
    """A large matrix in a small batch splits its own work into tasks (the reduction's products, the basis,
    the rotations' column chunks, with a partial chunk at the end): the same bits on 1, 2 and 3 threads."""
    rng = np.random.default_rng(12)
    for shape in ((203, 203), (2, 150, 150)):
        a = rng.standard_normal(shape).astype(dtype)
        got = []
        try:
            for t in (1, 2, 3):
                kernels.set_threads(t)
                got.append((*kernels.eigh(a), kernels.eigvalsh(a, UPLO="U")))
        finally:
            kernels.set_threads(None)
        for x in got[1:]:
            for g, want in zip(x, got[0]):
                np.testing.assert_array_equal(g, want)
        assert_eigh(a, got[0][0], got[0][1], "L")
