"""Ops whose kernel is Python: NumPy views of ORT's memory on CPU (CuPy on CUDA), the `out=` path
that fills ORT's outputs, errors that keep the session usable, the parallel executor and threads."""
import threading

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import ortcustom
from ortcustom import Attr, Domain, Input, Op, Output
from ortcustom.testing import for_runtime, make_model

from helpers import CPU, run_python, run_threads, session


def _graph_session(nodes, inputs, outputs, domain, so=None, opsets=(("", 17),)):
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    ops = [helper.make_opsetid(d, v) for d, v in ((domain.name, 1),) + tuple(opsets)]
    model = for_runtime(helper.make_model(graph, opset_imports=ops))
    so = so or ort.SessionOptions()
    domain.register(so)
    return ort.InferenceSession(model.SerializeToString(), so, providers=CPU)


def _addr(a):
    return a.__array_interface__["data"][0]


# ---- CPU ops: elementwise, reductions, several outputs, attributes ---------------------------

Axpb = Op("Axpb", [Input("X", "T")], [Output("Y", "T", shape="X")], types={"T": ["float", "double", "int64"]},
          attrs=[Attr("a", "float", default=2.0), Attr("b", "int", default=1)],
          compute=lambda X, a, b: (X * X.dtype.type(a) + X.dtype.type(b)).astype(X.dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_elementwise_with_attributes_per_type(dtype):
    d = Domain("test.py").add(Axpb)
    x = np.arange(-3, 9, dtype=dtype).reshape(3, 4)
    sess = session(Axpb, d, {"X": x}, attrs={"a": 3.0, "b": -2})
    y = sess.run(None, {"X": x})[0]
    assert y.dtype == dtype
    np.testing.assert_array_equal(y, x * 3 - 2)


def _reduce(X, *, axis, keepdims, op):
    f = {"sum": np.sum, "max": np.max, "mean": np.mean}[op]
    return np.asarray(f(X, axis=axis, keepdims=bool(keepdims)), X.dtype)


def _reduce_shape(shapes, attrs):
    x = shapes["X"]
    if x is None:
        return None
    ax = attrs["axis"] % len(x)
    return x[:ax] + ((1,) if attrs["keepdims"] else ()) + x[ax + 1:]


Reduce = Op("PyReduce", [Input("X", "T")], [Output("Y", "T", shape=_reduce_shape)], types={"T": ["float", "double"]},
            attrs=[Attr("axis", "int", default=-1), Attr("keepdims", "int", default=0),
                   Attr("op", "string", default="sum")],
            compute=lambda X, **a: _reduce(X, **a))


@pytest.mark.parametrize("attrs", [{}, {"axis": 0, "keepdims": 1, "op": "max"}, {"axis": 1, "op": "mean"}])
def test_reductions(attrs):
    d = Domain("test.py").add(Reduce)
    x = np.random.default_rng(0).standard_normal((3, 4, 5))
    sess = session(Reduce, d, {"X": x}, attrs=attrs)
    full = {"axis": -1, "keepdims": 0, "op": "sum", **attrs}
    np.testing.assert_allclose(sess.run(None, {"X": x})[0], _reduce(x, **full))


def test_reduction_to_a_scalar_from_a_numpy_scalar():
    Total = Op("Total", [Input("X", "float")], [Output("S", "float")], compute=lambda X: X.sum())
    d = Domain("test.py").add(Total)
    x = np.arange(10, dtype=np.float32)
    got = session(Total, d, {"X": x}).run(None, {"X": x})[0]
    assert got.shape == () and got == 45


MinMax = Op("MinMaxArg", [Input("X", "float")],
            [Output("Lo", "float"), Output("Hi", "float"), Output("Arg", "int64")],
            compute=lambda X: (X.min(axis=-1), X.max(axis=-1), X.argmax(axis=-1)))


def test_several_outputs_of_different_types():
    d = Domain("test.py").add(MinMax)
    x = np.random.default_rng(1).standard_normal((4, 7)).astype(np.float32)
    lo, hi, arg = session(MinMax, d, {"X": x}).run(None, {"X": x})
    np.testing.assert_array_equal(lo, x.min(-1))
    np.testing.assert_array_equal(hi, x.max(-1))
    np.testing.assert_array_equal(arg, x.argmax(-1))
    assert arg.dtype == np.int64


def test_inputs_are_read_only_views_of_orts_memory():
    seen = {}

    def look(X):
        seen["addr"], seen["writeable"], seen["owns"] = _addr(X), X.flags.writeable, X.flags.owndata
        return X.copy()

    Look = Op("Look", [Input("X", "float")], [Output("Y", "float", shape="X")], compute=look)
    d = Domain("test.py").add(Look)
    x = np.arange(8, dtype=np.float32)
    np.testing.assert_array_equal(session(Look, d, {"X": x}).run(None, {"X": x})[0], x)
    assert seen == {"addr": _addr(x), "writeable": False, "owns": False}  # the fed array, not a copy


# ---- the out= path ---------------------------------------------------------------------------

def _scale_into(X, Z, *, alpha, out):
    y, w = out
    np.multiply(X, X.dtype.type(alpha), out=y)
    np.add(Z, Z, out=w)


ScaleInto = Op("ScaleInto", [Input("X", "T"), Input("Z", "T")],
               [Output("Y", "T", shape="X"), Output("W", "T", shape="Z")], types={"T": ["float", "double"]},
               attrs=[Attr("alpha", "float", default=1.0)], compute=_scale_into)


def test_out_fills_orts_outputs_without_a_copy():
    calls = []

    def fill(X, *, out):
        calls.append((_addr(out[0]), out[0].flags.writeable, out[0].shape, out[0].dtype))
        np.negative(X, out=out[0])  # returns None

    Fill = Op("Fill", [Input("X", "float")], [Output("Y", "float", shape="X")], compute=fill)
    d = Domain("test.py").add(Fill)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    sess = session(Fill, d, {"X": (np.float32, ["n", 4])})
    # ORT writes a bound output straight into our buffer: the kernel's out view must be that buffer
    y = np.zeros_like(x)
    io = sess.io_binding()
    io.bind_cpu_input("X", x)
    io.bind_output("Y", "cpu", 0, np.float32, list(y.shape), _addr(y))
    sess.run_with_iobinding(io)
    np.testing.assert_array_equal(y, -x)
    assert calls == [(_addr(y), True, (3, 4), np.float32)]
    np.testing.assert_array_equal(sess.run(None, {"X": x})[0], -x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_out_with_two_outputs_and_attributes(dtype):
    d = Domain("test.py").add(ScaleInto)
    x, z = np.arange(6, dtype=dtype).reshape(2, 3), np.full(3, 0.5, dtype)
    sess = session(ScaleInto, d, {"X": x, "Z": z}, attrs={"alpha": -1.5})
    y, w = sess.run(None, {"X": x, "Z": z})
    np.testing.assert_array_equal(y, x * dtype(-1.5))
    np.testing.assert_array_equal(w, z + z)
    assert y.shape == (2, 3) and w.shape == (3,)


class _Holder:
    """A method as kernel, with out= (bound methods are inspected like functions)."""

    def __init__(self, offset):
        self.offset = offset

    def __call__(self, X, *, out=None):  # noqa: D401
        return self.add(X, out=out)

    def add(self, X, *, out=None):
        if out is None:
            return X + self.offset
        np.add(X, self.offset, out=out[0])
        return out  # returning the out views themselves is fine


@pytest.mark.parametrize("with_shape", [True, False])
def test_out_is_given_only_when_outputs_can_be_shaped_before_the_call(with_shape):
    got = []
    h = _Holder(np.float32(2))

    def method(X, *, out=None):
        got.append(out is not None)
        return h.add(X, out=out)

    M = Op("M", [Input("X", "float")], [Output("Y", "float", shape="X" if with_shape else None)], compute=method)
    d = Domain("test.py").add(M)
    x = np.ones(5, np.float32)
    np.testing.assert_array_equal(session(M, d, {"X": x}).run(None, {"X": x})[0], x + 2)
    assert got == [with_shape]


def test_bound_method_kernel_with_out():
    h = _Holder(np.float32(5))
    M = Op("M", [Input("X", "float")], [Output("Y", "float", shape="X")], compute=h.add)
    d = Domain("test.py").add(M)
    x = np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(session(M, d, {"X": x}).run(None, {"X": x})[0], x + 5)


def test_out_path_copies_other_arrays_returned_and_checks_their_shape():
    def other(X, *, out):
        return X[::-1] * 2  # not the out view: copied in (non-contiguous source is fine too)

    def bad(X, *, out):
        return X[:1]

    Other = Op("Other", [Input("X", "float")], [Output("Y", "float", shape="X")], compute=other)
    Bad = Op("Bad", [Input("X", "float")], [Output("Y", "float", shape="X")], compute=bad)
    d = Domain("test.py").add(Other, Bad)
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(session(Other, d, {"X": x}).run(None, {"X": x})[0], x[::-1] * 2)
    with pytest.raises(Exception, match=r"output Y has shape \(1,\); with out= it must have the shape of X: \(4,\)"):
        session(Bad, d, {"X": x}).run(None, {"X": x})


# Whatever an out= kernel returns is copied in correctly or refused with a clear error, never a
# crash: case -> (the kernel, the output expected or a regex of the error). X is square, so a
# transposed result has the right shape but not the layout of the out view.
_X = (np.arange(16, dtype=np.float32) - 5).reshape(4, 4)
_OUT_RETURNS = {
    "fortran-ordered": (lambda X, *, out: np.asfortranarray(X * 2), _X * 2),
    "strided": (lambda X, *, out: np.repeat(X * 2, 2, axis=1)[:, ::2], _X * 2),
    "reversed": (lambda X, *, out: (X * 2)[::-1, ::-1], (_X * 2)[::-1, ::-1]),
    "byte-swapped": (lambda X, *, out: (X * 2).astype(">f4"), _X * 2),
    "the out view, transposed": (lambda X, *, out: (np.multiply(X, 2, out=out[0]), out[0].T)[1], (_X * 2).T),
    "a list of rows": (lambda X, *, out: [r * 2 for r in X], _X * 2),
    "None, out filled": (lambda X, *, out: (np.multiply(X, 2, out=out[0]), None)[1], _X * 2),
    "float64": (lambda X, *, out: X * 2.0 + np.zeros(1), "output Y has dtype float64; the op declares float32"),
    "wrong shape": (lambda X, *, out: X[:1], r"output Y has shape \(1, 4\); with out= it must have the shape of X"),
    "a Python float": (lambda X, *, out: 2.0, "output Y has dtype float64; the op declares float32"),
    "a NumPy scalar": (lambda X, *, out: np.float32(2), r"output Y has shape \(\); with out= it must have"),
    "a list of numbers": (lambda X, *, out: [1, 2], "output Y has dtype int64; the op declares float32"),
    "a ragged list": (lambda X, *, out: [[1.0], [1.0, 2.0]], "output Y is not an array"),
    "an object": (lambda X, *, out: object(), "output Y has dtype object; the op declares float32"),
    "too deep": (lambda X, *, out: np.zeros((1,) * 17, np.float32), "output Y has rank 17; at most 16"),
    "two results": (lambda X, *, out: (X, X), "the Python kernel returned 2 outputs; the node has 1"),
}


def _check_out_return(case):
    """Runs one case of _OUT_RETURNS (in a subprocess: see the test below)."""
    fn, expect = _OUT_RETURNS[case]
    Ret = Op("Ret", [Input("X", "float")], [Output("Y", "float", shape="X")], compute=fn)
    sess = session(Ret, Domain("test.py").add(Ret), {"X": _X})
    if isinstance(expect, str):
        with pytest.raises(Exception, match=r"Ret \(node 'n0'\): " + expect):
            sess.run(None, {"X": _X})
    else:
        np.testing.assert_array_equal(sess.run(None, {"X": _X})[0], expect)


_RUN_OUT_RETURNS = r"""
import sys
sys.path.insert(0, {here!r})
import test_python_ops as t
for case in t._OUT_RETURNS:
    try:
        t._check_out_return(case)
        print(case, "ok", sep="\t", flush=True)
    except BaseException as e:
        print(case, repr(e).replace("\n", " "), sep="\t", flush=True)
"""


@pytest.fixture(scope="module")
def out_return_results():
    """Every case of _OUT_RETURNS, in one fresh interpreter (a crash fails the cases from there on)."""
    import os

    from helpers import run_python

    here = os.path.dirname(os.path.abspath(__file__))
    r = run_python(_RUN_OUT_RETURNS.format(here=here))
    got = dict(line.split("\t", 1) for line in r.stdout.splitlines() if "\t" in line)
    return got, r


@pytest.mark.parametrize("case", list(_OUT_RETURNS))
def test_out_path_copies_or_refuses_whatever_the_kernel_returns(case, out_return_results):
    got, r = out_return_results
    assert case in got, f"the process died (exit {r.returncode}) at this case: {r.stderr[-2000:]}"
    assert got[case] == "ok"


def test_out_required_but_shape_unknown_is_a_clear_error():
    Need = Op("Need", [Input("X", "float")], [Output("Y", "float")], compute=lambda X, *, out: None)
    d = Domain("test.py").add(Need)
    with pytest.raises(Exception, match="requires out=, but the outputs cannot be allocated before the call: "
                                        "output Y does not declare shape"):
        session(Need, d, {"X": np.ones(2, np.float32)}).run(None, {"X": np.ones(2, np.float32)})


def test_non_contiguous_and_large_results_are_copied():
    T = Op("Tr", [Input("X", "double")], [Output("Y", "double")], compute=lambda X: X.T)
    Big = Op("Big", [Input("X", "double")], [Output("Y", "double", shape="X")], compute=lambda X: X + 1)
    d = Domain("test.py").add(T, Big)
    x = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(session(T, d, {"X": x}).run(None, {"X": x})[0], x.T)
    big = np.random.default_rng(2).standard_normal(1 << 17)  # 1 MiB: copied with the GIL released
    np.testing.assert_array_equal(session(Big, d, {"X": big}).run(None, {"X": big})[0], big + 1)


@pytest.mark.parametrize("shape", [(3, 4), (1 << 15,)])  # memmove'd with and without the GIL
def test_byte_swapped_results_are_converted(shape):
    Swap = Op("Swap", [Input("X", "double")], [Output("Y", "double")], compute=lambda X: (X + 1).astype(">f8"))
    d = Domain("test.py").add(Swap)
    x = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    np.testing.assert_array_equal(session(Swap, d, {"X": x}).run(None, {"X": x})[0], x + 1)


# ---- errors ----------------------------------------------------------------------------------

def _inner(x):
    raise KeyError(f"bad value {float(x[0])}")


def _outer(X):
    return _inner(X)


@pytest.mark.parametrize("use_out", [False, True])
def test_exception_type_message_and_last_frames_and_the_session_survives(use_out):
    if use_out:
        def fn(X, *, out):
            if X[0] < 0:
                _outer(X)
            np.copyto(out[0], X)
    else:
        def fn(X):
            return _outer(X) if X[0] < 0 else X

    Raiser = Op("Raiser", [Input("X", "float")], [Output("Y", "float", shape="X")], compute=fn)
    d = Domain("test.py").add(Raiser)
    sess = session(Raiser, d, {"X": (np.float32, [2])})
    with pytest.raises(Exception) as e:
        sess.run(None, {"X": np.array([-1, 1], np.float32)})
    msg = str(e.value)
    assert "Raiser (node 'n0'): the Python kernel raised KeyError: 'bad value -1.0'" in msg
    assert "in _outer" in msg and "in _inner" in msg and 'raise KeyError(f"bad value' in msg  # last frames
    assert "test_python_ops.py" in msg
    for v in (1.0, 2.0):  # still usable
        np.testing.assert_array_equal(sess.run(None, {"X": np.full(2, v, np.float32)})[0], [v, v])


@pytest.mark.parametrize("fn, expect", [
    (lambda X: X.astype(np.float64), "output Y has dtype float64; the op declares float32"),
    (lambda X: (X, X), "returned 2 outputs; the node has 1"),
    (lambda X: None, "returned None for required output Y"),
    (lambda X: [[1.0, 2.0]], "output Y has dtype float64"),
])
def test_bad_results_are_ort_errors(fn, expect):
    Bad = Op("BadResult", [Input("X", "float")], [Output("Y", "float")], compute=fn)
    d = Domain("test.py").add(Bad)
    sess = session(Bad, d, {"X": (np.float32, [2])})
    with pytest.raises(Exception, match=expect):
        sess.run(None, {"X": np.ones(2, np.float32)})


# ---- the parallel executor and threads -------------------------------------------------------

def _double_into(X, *, out):
    np.multiply(X, 2, out=out[0])


PyDouble = Op("PyDouble", [Input("X", "float")], [Output("Y", "float", shape="X")], compute=_double_into)
PySquare = Op("PySquare", [Input("X", "float")], [Output("Y", "float", shape="X")], compute=lambda X: X * X)
PyCombine = Op("PyCombine", [Input("A", "float"), Input("B", "float")], [Output("C", "float", shape="A")],
               compute=lambda A, B: A - B)


def _parallel_graph_session(intra=2, inter=2, parallel=True):
    d = Domain("test.par").add(PyDouble, PySquare, PyCombine)
    so = ort.SessionOptions()
    if parallel:
        so.execution_mode = ort.ExecutionMode.ORT_PARALLEL
        so.inter_op_num_threads = inter
    so.intra_op_num_threads = intra
    f = TensorProto.FLOAT
    nodes = [helper.make_node("PyDouble", ["X"], ["D"], domain=d.name, name="double"),
             helper.make_node("PySquare", ["X"], ["S"], domain=d.name, name="square"),
             helper.make_node("PyCombine", ["D", "S"], ["C"], domain=d.name, name="combine")]
    vi = lambda n: helper.make_tensor_value_info(n, f, ["n"])  # noqa: E731
    return _graph_session(nodes, [vi("X")], [vi("D"), vi("S"), vi("C")], d, so=so)


def _check_parallel_graph(sess, x):
    d, s, c = sess.run(None, {"X": x})
    np.testing.assert_array_equal(d, 2 * x)
    np.testing.assert_array_equal(s, x * x)
    np.testing.assert_array_equal(c, 2 * x - x * x)


def test_parallel_executor_with_independent_python_nodes():
    sess = _parallel_graph_session()
    rng = np.random.default_rng(3)
    for n in (1, 7, 1000):
        for _ in range(20):
            _check_parallel_graph(sess, rng.standard_normal(n).astype(np.float32))


@pytest.mark.parametrize("parallel", [False, True])
def test_one_session_from_eight_python_threads(parallel):
    sess = _parallel_graph_session(parallel=parallel)
    barrier = threading.Barrier(8)

    def work(seed):
        rng = np.random.default_rng(seed)
        barrier.wait()
        for i in range(100):
            x = rng.standard_normal(1 + (seed * 31 + i) % 50).astype(np.float32) + seed
            _check_parallel_graph(sess, x)

    run_threads(8, work)


# ---- CUDA: CuPy arrays on ORT's device memory and stream -------------------------------------

def _cuda_skip_reason():
    try:
        import cupy
    except ImportError:
        return "cupy is not installed"
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return "no CUDA device"
    except Exception as e:  # noqa: BLE001
        return f"no CUDA device ({e})"
    if "CUDAExecutionProvider" not in ort.get_available_providers():
        return "onnxruntime has no CUDAExecutionProvider"
    if "cuda" not in getattr(Op, "__dataclass_fields__", {}):
        return "ortcustom.Op has no cuda= flag yet (CUDA bindings of Python ops are not registered)"
    return None


@pytest.mark.skipif(_cuda_skip_reason() is not None, reason=str(_cuda_skip_reason()))
def test_cupy_op_on_gpu():
    import cupy

    seen = []

    def gpu_axpy(X, Y, *, alpha, out=None):
        seen.append((type(X), X.data.ptr != 0))
        if out is None:
            return X * X.dtype.type(alpha) + Y
        cupy.add(X * X.dtype.type(alpha), Y, out=out[0])

    Axpy = Op("CupyAxpy", [Input("X", "float"), Input("Y", "float")], [Output("Z", "float", shape="X")],
              attrs=[Attr("alpha", "float", default=2.0)], compute=gpu_axpy, cuda=True)
    d = Domain("test.cuda").add(Axpy)
    model = make_model(Axpy, d, {"X": (np.float32, ["n"]), "Y": (np.float32, ["n"])}, attrs={"alpha": 3.0})
    sess = ort.InferenceSession(model.SerializeToString(), ortcustom.session_options(d),
                                providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
    x = np.arange(1 << 16, dtype=np.float32)
    y = np.ones_like(x)
    np.testing.assert_allclose(sess.run(None, {"X": x, "Y": y})[0], 3 * x + y)
    assert seen and all(t is cupy.ndarray and nonnull for t, nonnull in seen)


def test_cpu_python_kernels_never_import_cupy():
    code = ("import sys, numpy as np, ortcustom\n"
            "from ortcustom import Domain, Input, Op, Output\n"
            "from ortcustom.testing import make_model\n"
            "import onnxruntime as ort\n"
            "op = Op('Twice', [Input('X', 'float')], [Output('Y', 'float', shape='X')], compute=lambda X: 2 * X)\n"
            "d = Domain('test.nocupy').add(op)\n"
            "x = np.ones(3, np.float32)\n"
            "s = ort.InferenceSession(make_model(op, d, {'X': x}).SerializeToString(), ortcustom.session_options(d),\n"
            "                         providers=['CPUExecutionProvider'])\n"
            "assert (s.run(None, {'X': x})[0] == 2).all()\n"
            "assert 'cupy' not in sys.modules\n")
    r = run_python(code)
    assert r.returncode == 0, r.stderr
