"""ortcustom.kernels: the compiled kernels called on NumPy arrays, without ONNX Runtime."""
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

from ortcustom import kernels
from ortcustom.ops import GroupNorm

from helpers import assert_inverse, random_normal, row_cycled, well_conditioned


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_inverse(dtype):
    x = (np.random.default_rng(0).standard_normal((3, 2, 7, 7)) + 7 * np.eye(7)).astype(dtype)
    out = np.empty_like(x)
    assert kernels.inverse(x, out=out) is out
    assert_inverse(x, out)
    np.testing.assert_array_equal(kernels.inverse(x), out)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("n", [3, 12, 16, 40, 300])  # unrolled, leaves, panels (run serially here)
def test_inverse_of_matrices_that_need_pivoting(dtype, n):
    rng = np.random.default_rng(n)
    x = row_cycled(rng, (2, n, n), dtype)
    assert_inverse(x, kernels.inverse(x))
    if dtype == np.float64:
        x = random_normal(rng, (2, n, n), dtype)
        assert_inverse(x, kernels.inverse(x))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("swaps", [0, 1, 3])
def test_inverse_with_few_row_swaps(dtype, swaps):
    """The output's column permutation is copied as stretches when it has few breaks (no swap, a
    few) and gathered element by element otherwise: both give the inverse."""
    rng = np.random.default_rng(swaps)
    n = 300
    x = well_conditioned(rng, (1, n, n), dtype)
    for i in range(swaps):
        a, b = 7 + 50 * i, 200 + 31 * i
        x[0, [a, b]] = x[0, [b, a]]
    assert_inverse(x, kernels.inverse(x))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_inverse_does_not_depend_on_the_thread_count(dtype):
    """The blocked path splits each rank-k update's rows across tasks; every element is summed in
    one order whatever the threads (300: a panel narrower than 128 and strips narrower than the
    micro-kernel; 1000: rows not a multiple of its height)."""
    rng = np.random.default_rng(5)
    xs = [row_cycled(rng, (1, n, n), dtype)[0] for n in (300, 1000)]
    try:
        got = []
        for t in (1, 2, 3):
            kernels.set_threads(t)
            got.append([kernels.inverse(x) for x in xs])
    finally:
        kernels.set_threads(None)
    for ys in got[1:]:
        for y, y1 in zip(ys, got[0]):
            np.testing.assert_array_equal(y, y1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [40, 300])
def test_equal_rows_give_a_non_finite_inverse_on_the_blocked_path(dtype, n):
    """Multipliers are true divisions, so two equal rows cancel exactly: an exact zero pivot, whose
    division leaves inf/nan (not a huge finite "inverse"); the other matrix of the batch is exact."""
    rng = np.random.default_rng(n)
    x = well_conditioned(rng, (2, n, n), dtype)
    x[0, n // 2] = x[0, 3]
    y = kernels.inverse(x)
    assert not np.isfinite(y[0]).all()
    assert_inverse(x[1:], y[1:])


@pytest.mark.parametrize("n", [512, 1024])
@pytest.mark.parametrize("gen", [well_conditioned, row_cycled])
def test_large_float32_inverse_is_as_accurate_as_torch(n, gen):
    """The forward error max|Y - inv(X)| / max|inv(X)| (inv in float64) of the blocked float32 path
    stays within 2x that of torch.linalg.inv (MKL's LU-based getrf + getri) on the same input."""
    torch = pytest.importorskip("torch")
    x = gen(np.random.default_rng(n), (n, n), np.float32)
    ref = np.linalg.inv(x.astype(np.float64))

    def error(y):
        return np.abs(y.astype(np.float64) - ref).max() / np.abs(ref).max()

    ours, theirs = error(kernels.inverse(x)), error(torch.linalg.inv(torch.from_numpy(x)).numpy())
    assert ours <= 2 * theirs, (ours, theirs)


@pytest.mark.parametrize("dtype, tol", [(np.float32, 1e-5), (np.float64, 1e-12), (np.float16, 1e-2)])
def test_group_norm(dtype, tol):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 6, 5, 3)).astype(dtype)
    s, b = rng.standard_normal(6).astype(dtype), rng.standard_normal(6).astype(dtype)
    y = kernels.group_norm(x, 3, s, b, epsilon=2.0**-10)  # a float32 value: ONNX float attributes are float32
    ref = GroupNorm.reference(x, np.array(3), s, b, epsilon=2.0**-10)
    np.testing.assert_allclose(y.astype(np.float64), ref.astype(np.float64), rtol=tol, atol=tol)


def test_non_contiguous_input_is_taken_and_empty_is_fine():
    x = (np.random.default_rng(2).standard_normal((4, 4, 2)) + 4 * np.eye(4)[..., None]).astype(np.float32)
    view = x[..., 0]  # strided
    assert_inverse(view, kernels.inverse(view))
    empty = kernels.inverse(np.ones((0, 3, 3), np.float32))
    assert empty.shape == (0, 3, 3) and empty.dtype == np.float32


@pytest.mark.parametrize("call, match", [
    (lambda: kernels.inverse(np.ones((2, 3), np.float32)), r"X has shape \(2, 3\); expected"),
    (lambda: kernels.inverse(np.ones((2, 2), np.int32)), "accepts float32, float64, float16"),
    (lambda: kernels.inverse(np.ones((2, 2), np.float32), out=np.ones((2, 2))), "out must be"),
    (lambda: kernels.group_norm(np.ones((2, 6), np.float32), 4), "divide the 6 channels"),
    (lambda: kernels.group_norm(np.ones((2, 6), np.float32), 3, np.ones(5, np.float32)), r"scale has shape \(5,\)"),
    (lambda: kernels.group_norm(np.ones((2, 6), np.float32), 3, epsilon=-1), "epsilon=-1.0 is invalid: must be >= 0"),
    (lambda: kernels.group_norm(np.ones(6, np.float32), 3), r"expected \(N, C, ...\)"),
])
def test_errors(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


def test_gpu_array_without_a_usable_gpu_is_a_clear_error():
    from ortcustom.native import builtin_info

    if builtin_info("cuda_device_count") > 0:
        pytest.skip("a GPU is here: a fake device pointer would fault")

    class DeviceArray:  # any array exposing __cuda_array_interface__ (not CuPy, not torch)
        def __init__(self, ptr):
            self.__cuda_array_interface__ = {"shape": (2, 3, 3), "typestr": "<f4", "data": (ptr, False),
                                             "version": 3, "strides": None}

    with pytest.raises(RuntimeError, match=r"^Inverse: .*CUDA"):
        kernels.inverse(DeviceArray(4096), out=DeviceArray(8192))
    with pytest.raises(RuntimeError, match=r"^GroupNorm: .*CUDA"):
        kernels.group_norm(DeviceArray(4096), 1, out=DeviceArray(8192))
    if builtin_info("cuda_built"):  # (else "built without CUDA" comes first)
        with pytest.raises(ValueError, match=r"^Inverse: out overlaps X"):
            kernels.inverse(DeviceArray(4096), out=DeviceArray(4096 + 4))
    assert np.allclose(kernels.inverse(2 * np.eye(3, dtype=np.float32)), np.eye(3) / 2)  # and the next call works


def test_out_partly_overlapping_x_is_refused_and_out_equal_to_x_works():
    buf = np.zeros(2 * 9 + 1, np.float32)
    x = buf[:18].reshape(2, 3, 3)
    x[:] = 2 * np.eye(3, dtype=np.float32)
    with pytest.raises(ValueError, match=r"^Inverse: out overlaps X"):
        kernels.inverse(x, out=buf[1:19].reshape(2, 3, 3))
    with pytest.raises(ValueError, match=r"^GroupNorm: out overlaps X"):
        kernels.group_norm(x, 1, out=buf[1:19].reshape(2, 3, 3))
    np.testing.assert_allclose(kernels.inverse(x, out=x), np.broadcast_to(np.eye(3) / 2, (2, 3, 3)))


def test_shape_rules_are_remembered_per_shapes_and_attributes():
    # a direct call keeps what the rules said for the inputs' shapes and attributes: another shape or
    # attribute value must get its own word, and a refused shape is refused on every call
    rng = np.random.default_rng(3)
    tall, wide = rng.standard_normal((5, 3)).astype(np.float32), rng.standard_normal((3, 5)).astype(np.float32)
    for _ in range(2):
        for a, mode, q_shape, r_shape in ((tall, "reduced", (5, 3), (3, 3)), (tall, "complete", (5, 5), (5, 3)),
                                          (wide, "reduced", (3, 3), (3, 5)), (tall, "r", (0,), (3, 3))):
            q, r = kernels.qr(a, mode=mode)
            assert q.shape == q_shape and r.shape == r_shape, (a.shape, mode)
    for _ in range(2):
        with pytest.raises(ValueError, match="SolveTriangular"):
            kernels.solve_triangular(np.eye(3, dtype=np.float32), np.ones((4, 2), np.float32), upper=0)
    x = kernels.solve_triangular(np.eye(4, dtype=np.float32), np.ones((4, 2), np.float32), upper=0)
    assert x.shape == (4, 2)


def test_a_repeated_call_is_checked_as_its_first_and_runs_on_its_own_data():
    # a call whose input types, shapes and attributes were seen (kernels._repeat_key) skips the checks
    # (kernels.call: _Plan.repeats); each of those, changed alone, must be checked and run anew, and the
    # data, changed alone, must be read
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 6, 5)).astype(np.float32)
    s, b = rng.standard_normal(6).astype(np.float32), rng.standard_normal(6).astype(np.float32)

    def ref(x, s=None, b=None, groups=3, eps=1e-5):
        return GroupNorm.reference(x, np.array(groups), s, b, epsilon=eps)

    for _ in range(3):
        for xx in (x, x.astype(np.float64), x[:1], -x, x.reshape(2, 6, 5, 1)):
            y = kernels.group_norm(xx, 3, s.astype(xx.dtype), b.astype(xx.dtype))
            assert y.dtype == xx.dtype and y.shape == xx.shape
            np.testing.assert_allclose(y, ref(xx, s, b), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(kernels.group_norm(x, 3), ref(x), rtol=1e-5, atol=1e-5)  # optional inputs absent
        np.testing.assert_allclose(kernels.group_norm(x, 3, s), ref(x, s), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(kernels.group_norm(x, 2, s, b), ref(x, s, b, 2), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(kernels.group_norm(x, 3, s, b, epsilon=4.0), ref(x, s, b, eps=4.0), rtol=1e-5)
        wide = np.zeros((2, 6, 10), np.float32)
        wide[:, :, ::2] = x
        view = wide[:, :, ::2]  # the same dtype and shape, not contiguous: read as it lies, through a copy
        np.testing.assert_allclose(kernels.group_norm(view, 3, s, b), ref(x, s, b), rtol=1e-5, atol=1e-5)
        with pytest.raises(TypeError, match="accepts"):  # refused on every call
            kernels.group_norm(x.astype(np.int32), 3)
        with pytest.raises(ValueError, match="divide the 6 channels"):
            kernels.group_norm(x, 4)
        with pytest.raises(ValueError, match=r"scale has shape \(5,\)"):
            kernels.group_norm(x, 3, s[:5])
        # a Python int for an input of type T: its dtype goes by its value (NumPy's), checked every call
        assert kernels.search_sorted(np.array([1, 3, 5, 7]), 4) == 2
        with pytest.raises(TypeError, match="values has dtype uint64"):
            kernels.search_sorted(np.array([1, 3, 5, 7]), 2**63)


def test_a_repeated_call_fails_as_its_first_would_and_the_next_works():
    # a repeat (_customop.Repeat) checks nothing again, but what the kernel finds is its own: a singular
    # matrix of a shape already seen fails naming its batch index, and the next call runs
    good = np.stack([np.eye(3), 2 * np.eye(3)]).astype(np.float32)
    bad = good.copy()
    bad[1] = 1
    b = np.arange(6, dtype=np.float32).reshape(2, 3, 1)
    for _ in range(3):
        np.testing.assert_array_equal(kernels.solve(good, b), b / np.array([1, 2], np.float32)[:, None, None])
        with pytest.raises(ValueError, match="Solve: input A: the matrix at batch index 1 is singular"):
            kernels.solve(bad, b)


_CAPPED = textwrap.dedent("""
    import resource, numpy as np
    from ortcustom import kernels

    v = np.arange(1000, dtype=np.float32)
    q = np.full(4_000_000, 2.5, np.float32)  # its int64 output: 32 MB

    def capped(f):
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        held = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
        resource.setrlimit(resource.RLIMIT_AS, (held + (16 << 20), hard))  # too little for the output
        try:
            f()
            print("ran")
        except MemoryError as e:
            print("refused:", e)
        finally:
            resource.setrlimit(resource.RLIMIT_AS, (soft, hard))

    kernels.search_sorted(v, q[:1_000_000])  # the thread pool started before any cap
    capped(lambda: kernels.search_sorted(v, q))  # a first call: every check
    print(kernels.search_sorted(v, q)[:2].tolist())
    capped(lambda: kernels.search_sorted(v, q))  # its repeat (_Plan.repeats)
    print(kernels.search_sorted(v, q - 1)[:2].tolist())
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc/self/statm")
def test_an_output_that_cannot_be_allocated_is_an_error_naming_the_op_on_a_first_call_and_a_repeat():
    run = subprocess.run([sys.executable, "-c", _CAPPED], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    refused = "refused: SearchSorted: output Y of shape (4000000,) (int64) cannot be allocated: MemoryError: "
    assert lines[0].startswith(refused) and lines[2].startswith(refused), run.stdout
    assert lines[1] == "[3, 3]" and lines[3] == "[2, 2]", run.stdout


def test_repeats_from_many_threads_at_once_each_get_their_own_outputs():
    # every thread repeats one call (one _customop.Repeat, the kernel running without the GIL) on its
    # own data: each result is its own, as a call alone gives it
    rng = np.random.default_rng(5)
    a = [well_conditioned(rng, (4, 24, 24), np.float32) for _ in range(8)]
    b = [rng.standard_normal((4, 24, 2)).astype(np.float32) for _ in range(8)]
    want = [kernels.solve(x, y) for x, y in zip(a, b)]
    wrong = []

    def work(i):
        for _ in range(300):
            if not np.array_equal(kernels.solve(a[i], b[i]), want[i]):
                wrong.append(i)
                return

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not wrong
