import os
import sys

import numpy as np
import onnxruntime as ort
import pytest

import ortcustom
from ortcustom.ops import Inverse
from ortcustom.testing import make_model

from helpers import CPU, assert_inverse, random_normal, row_cycled, run_python, session, well_conditioned

def run_inverse(x, domain="com.microsoft", shape=None):
    dom = ortcustom.Domain(domain).add(Inverse)
    sess = session(Inverse, dom, {"X": (x.dtype, shape if shape is not None else x.shape)})
    return sess.run(None, {"X": x})[0]


def test_two_by_two():
    x = np.array([[4, 7], [2, 6]], np.float32)
    np.testing.assert_allclose(run_inverse(x), [[0.6, -0.7], [-0.2, 0.4]], rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (3, 3), (4, 4), (0, 4, 4), (1, 5, 5), (7, 8, 8),
                                   (2, 3, 16, 16), (33, 33), (3, 64, 64), (2, 0, 0), (0, 1, 1)])
def test_matches_numpy(dtype, shape):
    rng = np.random.default_rng(sum(shape))
    x = well_conditioned(rng, shape, dtype)
    assert_inverse(x, run_inverse(x))


def test_large_matrix_in_a_session_has_the_same_bits_on_any_pool_size():
    """A large matrix runs as one parallel region on ORT's intra-op pool (its first task leads, the
    others help, kernels/cpu/team.h): 1, 2 or 3 threads, and a direct call, give the same bits."""
    from ortcustom import kernels

    x = row_cycled(np.random.default_rng(4), (1000, 1000), np.float32)
    dom = ortcustom.Domain("com.microsoft").add(Inverse)
    outs = []
    for threads in (1, 2, 3):
        so = ortcustom.session_options(dom)
        so.intra_op_num_threads = threads
        outs.append(session(Inverse, dom, {"X": (x.dtype, x.shape)}, so=so).run(None, {"X": x})[0])
    assert_inverse(x, outs[0])
    for y in outs[1:] + [kernels.inverse(x)]:
        np.testing.assert_array_equal(y, outs[0])


@pytest.mark.parametrize("gen", [well_conditioned, row_cycled])
@pytest.mark.parametrize("n", range(1, 65))
def test_every_size_up_to_64(n, gen):
    x = gen(np.random.default_rng(n), (3, n, n), np.float64)
    assert_inverse(x, run_inverse(x))


# Every path of the CPU kernel: n <= 8 and 9..16 (unrolled, one matrix per SIMD row or several),
# 17..128 (blocked in 16-wide leaves), > 128 (128-wide panels of leaves); a batch below 4 (the
# parallelism inside each matrix) and above (chunks of the batch).
PIVOT_SIZES = [2, 3, 5, 8, 9, 13, 16, 17, 31, 48, 100, 129, 300]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("n", PIVOT_SIZES)
def test_matrices_that_need_pivoting(dtype, n):
    rng = np.random.default_rng(n)
    sess = session(Inverse, ortcustom.Domain("com.microsoft").add(Inverse), {"X": (dtype, ["b", n, n])})
    cases = [row_cycled(rng, (b, n, n), dtype) for b in (1, 5)]
    if dtype == np.float64 or (dtype == np.float32 and n <= 48):  # (else too ill-conditioned to check)
        cases += [random_normal(rng, (b, n, n), dtype) for b in (1, 5)]
    for x in cases:
        assert_inverse(x, sess.run(None, {"X": x})[0])


def test_needs_pivoting():
    x = np.array([[0, 1, 2], [1, 0, 3], [4, -3, 8]], np.float64)  # zero first pivot
    np.testing.assert_allclose(run_inverse(x), np.linalg.inv(x), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_singular_gives_non_finite_and_session_survives(dtype):
    dom = ortcustom.Domain("com.microsoft").add(Inverse)
    sess = session(Inverse, dom, {"X": (dtype, ["b", 3, 3])})
    singular = np.array([[[1, 2, 3], [2, 4, 6], [0, 1, 1]], [[0] * 3] * 3], dtype)
    y = sess.run(None, {"X": singular})[0]
    assert not np.isfinite(y[0]).all() and not np.isfinite(y[1]).all()
    good = np.eye(3, dtype=dtype)[None] * 2
    np.testing.assert_array_equal(sess.run(None, {"X": good})[0], good / 4)


@pytest.mark.parametrize("shape, expect", [((3,), "has shape (3,)"), ((2, 3), "has shape (2, 3)"),
                                           ((4, 2, 3), "has shape (4, 2, 3)"), ((), "has shape ()")])
def test_bad_shapes_are_ort_errors_naming_op_and_shape(shape, expect):
    dom = ortcustom.Domain("com.microsoft").add(Inverse)
    sess = session(Inverse, dom, {"X": (np.float32, None)})  # unknown rank: checked at run time
    with pytest.raises(ort.capi.onnxruntime_pybind11_state.InvalidArgument) as e:
        sess.run(None, {"X": np.ones(shape, np.float32)})
    msg = str(e.value)
    assert "Inverse (node 'n0')" in msg and "input X" in msg and expect in msg and "(..., N, N)" in msg
    np.testing.assert_allclose(sess.run(None, {"X": np.eye(2, dtype=np.float32)})[0], np.eye(2))


def test_takes_precedence_over_builtin_contrib_inverse():
    # ORT's own com.microsoft Inverse would not give our message: our kernel is the one that ran.
    dom = ortcustom.Domain("com.microsoft").add(Inverse)
    sess = session(Inverse, dom, {"X": (np.float32, None)})
    with pytest.raises(Exception, match=r"Inverse \(node 'n0'\): input X has shape \(2, 3\)"):
        sess.run(None, {"X": np.ones((2, 3), np.float32)})


def test_any_other_domain_where_only_ours_runs():
    x = well_conditioned(np.random.default_rng(1), (5, 6, 6), np.float32)
    assert_inverse(x, run_inverse(x, domain="org.example"))
    model = make_model(Inverse, "org.example", {"X": x})
    with pytest.raises(Exception, match="org.example"):  # without ortcustom ORT knows no such op
        ort.InferenceSession(model.SerializeToString(), providers=CPU)


def test_output_shape_inferred_at_session_creation():
    dom = ortcustom.Domain("com.microsoft").add(Inverse)
    model = make_model(Inverse, dom, {"X": (np.float32, ["batch", 5, 5])})
    model.graph.output[0].type.tensor_type.ClearField("shape")  # leave it to ORT to infer
    sess = ort.InferenceSession(model.SerializeToString(), ortcustom.session_options(dom), providers=CPU)
    assert sess.get_outputs()[0].shape == ["batch", 5, 5]


def test_unaccepted_type_fails_at_session_creation_listing_accepted_types():
    dom = ortcustom.Domain("com.microsoft").add(Inverse)
    model = make_model(Inverse, dom, {"X": (np.int32, [2, 2])}, outputs={"Y": (np.int32, [2, 2])})
    with pytest.raises(Exception) as e:
        ort.InferenceSession(model.SerializeToString(), ortcustom.session_options(dom), providers=CPU)
    msg = str(e.value)
    assert "Inverse (node 'n0')" in msg and "X: int32" in msg and "T in {float, double, float16}" in msg


_OOM = r'''
import resource, sys
import numpy as np
import ortcustom
from ortcustom import kernels
from ortcustom.ops import Inverse
sys.path.insert(0, {here!r})
from helpers import session

n = 4200
x = np.eye(n, dtype=np.float16) * 2
y = np.full_like(x, 7)
sess = session(Inverse, ortcustom.Domain("com.microsoft").add(Inverse), {{"X": (np.float16, [n, n])}})
io = sess.io_binding()  # ORT allocates nothing for the run: the output is ours
io.bind_cpu_input("X", x)
io.bind_output("Y", "cpu", 0, np.float16, [n, n], y.__array_interface__["data"][0])
soft, hard = resource.getrlimit(resource.RLIMIT_AS)
in_use = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
resource.setrlimit(resource.RLIMIT_AS, (in_use + (16 << 20), hard))
for name, call in (("session", lambda: sess.run_with_iobinding(io)), ("direct", lambda: kernels.inverse(x, out=y))):
    try:
        call()
        print(name, "no error")
    except BaseException as e:
        print(name, type(e).__name__, str(e).splitlines()[0])
resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
print("after", kernels.inverse(np.eye(40, dtype=np.float16) * 2)[0, 0])
'''


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc; relies on glibc's heap sizes")
def test_out_of_memory_is_an_error_not_a_wrong_output():
    """The blocked path's scratch (here ~74 MB: the float copy of a 4200 x 4200 float16 matrix,
    more than the 64 MiB heap glibc gives a thread, so only a new mapping can serve it) cannot be
    had under an address-space limit of 16 MiB above what the process uses: the run fails, naming
    the op and the cause, and so does the direct call; afterwards the kernel works again."""
    here = os.path.dirname(os.path.abspath(__file__))
    r = run_python(_OOM.format(here=here))
    assert r.returncode == 0, r.stderr[-3000:]
    lines = r.stdout.splitlines()
    assert lines[0].startswith("session ") and "Inverse (node 'n0'): out of memory for the scratch space of " \
        "4200 x 4200 matrices" in lines[0], lines
    assert lines[1] == "direct MemoryError Inverse: out of memory for the scratch space of 4200 x 4200 matrices"
    assert lines[2] == "after 0.5"
