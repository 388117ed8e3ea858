"""SolveTriangular (torch.linalg.solve_triangular): backward error within a small multiple of eps times
the condition, torch's broadcasting and options, in a session, by direct call, as a torch op, from both
exporters."""
import warnings

import numpy as np
import onnxruntime as ort
import pytest

import ortcustom
from ortcustom import kernels
from ortcustom.ops import SolveTriangular
from ortcustom.testing import make_model

from helpers import CPU, InvalidArgument, session

torch = pytest.importorskip("torch")
import ortcustom.torch_ops  # noqa: E402,F401

DOM = ortcustom.Domain("ortcustom").add(SolveTriangular)
EPS = {np.float32: np.finfo(np.float32).eps, np.float64: np.finfo(np.float64).eps}


def triangular(rng, shape, dtype, upper):
    """Well-conditioned triangular matrices with junk in the other triangle (never read)."""
    n = shape[-1]
    t = rng.standard_normal(shape) / np.sqrt(max(n, 1)) + np.eye(n) * (2 + rng.uniform(0, 1, shape[:-1])[..., None])
    junk = rng.standard_normal(shape) * 1e3
    return (np.where(np.triu(np.ones((n, n), bool)) if upper else np.tril(np.ones((n, n), bool)), t, junk)).astype(dtype)


def run(a, b, **attrs):
    sess = session(SolveTriangular, DOM, {"A": (a.dtype, None), "B": (b.dtype, None)}, attrs=attrs)
    return sess.run(None, {"A": a, "B": b})[0]


def want(a, b, upper, left=1, unitriangular=0):
    return torch.linalg.solve_triangular(torch.from_numpy(a), torch.from_numpy(b), upper=bool(upper), left=bool(left),
                                         unitriangular=bool(unitriangular)).numpy()


def assert_solution(a, b, x, upper, left=1, unitriangular=0):
    """Residual ||T X - B|| <= c eps ||T|| ||X|| (backward error), T the triangle used."""
    t = np.triu(a) if upper else np.tril(a)
    t = t.astype(np.float64)
    if unitriangular:
        t = t * (1 - np.eye(a.shape[-1])) + np.eye(a.shape[-1])
    x64, b64 = x.astype(np.float64), b.astype(np.float64)
    r = (t @ x64 if left else x64 @ t) - b64
    n = a.shape[-1]
    bound = 8 * n * EPS[a.dtype.type] * (np.linalg.norm(t, axis=(-2, -1)) * np.linalg.norm(x64, axis=(-2, -1)))
    assert (np.linalg.norm(r, axis=(-2, -1)) <= bound + 1e-300).all()


CASES = [((3, 3), (3, 2)), ((1, 1), (1, 1)), ((4, 4), (5, 4, 3)), ((6, 5, 5), (5, 1)), ((2, 1, 8, 8), (3, 8, 2)),
         ((200, 200), (200, 300)), ((2, 130, 130), (2, 130, 1)), ((0, 3, 3), (3, 2)), ((3, 3), (3, 0)),
         ((0, 0), (0, 4)), ((1000, 4, 4), (1000, 4, 4)),
         ((70, 70), (70, 17)), ((33, 33), (2, 33, 15)),  # blocked, a partial vector; by rows, groups of 4 and 1
         ((130, 130), (3, 130, 140)), ((2, 150, 150), (2, 150, 272)),  # A packed once for a broadcast B; per matrix
         ((45, 45), (45, 3)), ((2, 61, 61), (2, 61, 6))]  # few columns as dot products: blocks of 4 and 2 rows, a partial one


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("upper", [0, 1])
@pytest.mark.parametrize("unit", [0, 1])
def test_chunks_sharing_packed_a_give_the_bits_of_separate_solves(dtype, upper, unit):
    # A X = B with many columns packs A once for all its 128-column chunks; each chunk must get the
    # bits of a solve of its columns alone (which packs its own blocks)
    rng = np.random.default_rng(7)
    a = triangular(rng, (260, 260), dtype, upper)
    b = rng.standard_normal((260, 300)).astype(dtype)
    x = kernels.solve_triangular(a, b, upper=upper, unitriangular=unit)
    for lo, hi in ((0, 128), (128, 256), (256, 300)):
        part = kernels.solve_triangular(a, np.ascontiguousarray(b[:, lo:hi]), upper=upper, unitriangular=unit)
        np.testing.assert_array_equal(x[:, lo:hi], part)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("upper", [0, 1])
@pytest.mark.parametrize("left", [1, 0])
@pytest.mark.parametrize("unit", [0, 1])
@pytest.mark.parametrize("a_shape, b_shape", CASES)
def test_matches_torch_with_broadcasting_and_every_option(dtype, upper, left, unit, a_shape, b_shape):
    rng = np.random.default_rng(sum(a_shape) + 3 * sum(b_shape))
    a = triangular(rng, a_shape, dtype, upper)
    if not left:
        b_shape = b_shape[:-2] + (b_shape[-1], b_shape[-2])
    b = rng.standard_normal(b_shape).astype(dtype)
    w = want(a, b, upper, left, unit)
    attrs = dict(upper=upper, left=left, unitriangular=unit)
    for got in (run(a, b, **attrs), kernels.solve_triangular(a, b, **attrs),
                torch.ops.ortcustom.solve_triangular(torch.from_numpy(a), torch.from_numpy(b), upper, left, unit).numpy()):
        assert got.shape == w.shape and got.dtype == w.dtype
        if got.size:
            assert_solution(np.broadcast_to(a, w.shape[:-2] + a.shape[-2:]), np.broadcast_to(b, w.shape), got, upper,
                            left, unit)
            np.testing.assert_allclose(got, w, rtol=1e3 * EPS[dtype], atol=1e3 * EPS[dtype] * np.abs(w).max())
    np.testing.assert_allclose(SolveTriangular.reference(a, b, **attrs), w, rtol=1e-3 if dtype == np.float32 else 1e-9,
                               atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_badly_conditioned_has_small_backward_error(dtype):
    rng = np.random.default_rng(9)
    n = 300
    a = np.tril(rng.standard_normal((n, n))) + np.diag(np.logspace(0, -6, n))  # cond far above 1/eps(float32)
    a = a.astype(dtype)
    b = rng.standard_normal((n, 4)).astype(dtype)
    x = run(a, b, upper=0)
    with np.errstate(all="ignore"):
        if np.isfinite(x).all():
            assert_solution(a, b, x, 0)


def test_zero_diagonal_gives_inf_or_nan_as_torch():
    a = np.array([[1.0, 0.0], [2.0, 0.0]])
    b = np.array([[1.0], [1.0]])
    x = run(a, b, upper=0)
    assert not np.isfinite(x[1]).any() and x[0, 0] == 1.0
    assert not np.isfinite(want(a, b, 0)[1]).any()


@pytest.mark.parametrize("a_shape, b_shape, left, expect", [
    ((3, 4), (3, 2), 1, "input A has shape (3, 4); expected (*, N, N)"),
    ((3,), (3, 2), 1, "input A has shape (3,)"),
    ((3, 3), (3,), 1, "input B has shape (3,); expected at least 2 dimensions"),
    ((3, 3), (4, 2), 1, "input B has shape (4, 2); incompatible with A of shape (3, 3) for A X = B (its dim -2 must be N = 3)"),
    ((3, 3), (3, 2), 0, "input B has shape (3, 2); incompatible with A of shape (3, 3) for X A = B (its dim -1"),
    ((2, 3, 3), (4, 3, 2), 1, "input B has shape (4, 3, 2); its batch dims do not broadcast with those of A, of shape (2, 3, 3)"),
])
def test_bad_shapes_are_clear_errors(a_shape, b_shape, left, expect):
    sess = session(SolveTriangular, DOM, {"A": (np.float32, None), "B": (np.float32, None)}, attrs={"upper": 0, "left": left})
    with pytest.raises(InvalidArgument) as e:
        sess.run(None, {"A": np.ones(a_shape, np.float32), "B": np.ones(b_shape, np.float32)})
    assert "SolveTriangular (node 'n0')" in str(e.value) and expect in str(e.value)


def test_upper_is_required_and_output_shape_inferred():
    model = make_model(SolveTriangular, DOM, {"A": (np.float32, [3, 3]), "B": (np.float32, [3, 2])})
    with pytest.raises(Exception, match="upper"):
        ort.InferenceSession(model.SerializeToString(), ortcustom.session_options(DOM), providers=CPU)
    model = make_model(SolveTriangular, DOM, {"A": (np.float32, ["b", 1, 4, 4]), "B": (np.float32, [5, 4, 2])},
                       attrs={"upper": 1})
    model.graph.output[0].type.tensor_type.ClearField("shape")
    sess = ort.InferenceSession(model.SerializeToString(), ortcustom.session_options(DOM), providers=CPU)
    assert sess.get_outputs()[0].shape == ["b", 5, 4, 2]
