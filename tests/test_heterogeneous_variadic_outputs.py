"""A variadic output declared `homogeneous=False` makes tensors of different element types, each any
of its constraint's: ORT is told "any", and each tensor's type is the node's (the model's graph
outputs or value_info), read when the kernel is created. The kernel sees it (oc_context.output_dtypes;
a Python kernel gets `out_dtypes=` and must return arrays of those dtypes), in a session (Python and
native kernels) and a plain library (a Python process without ortcustom, a C host); a direct call
takes the types as `out_types=`. A model that gives such a tensor no type, or one the op does not
take, is refused naming the op, the node and the output."""
import dataclasses

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper

import ortcustom
from c_host import needs_c_library, run_host
from helpers import CPU, compile_kernels, session
from ortcustom import Domain, Input, Op, Output, kernels
from ortcustom.testing import for_runtime, make_model
from ortcustom.types import numpy_dtype
from plain_library import NATIVE, registration_declarations, registration_library, without_ortcustom

decl = registration_declarations()
X = np.array([1.5, -2.0, 3.25, 7.75], np.float32)
FEEDS = {"X": X}
TYPES = ("int64", "float", "double", "int64")  # the node's output types, one per tensor of ys


def outputs(types):
    return {f"y{j}": (t, None) for j, t in enumerate(types)}


def expected(types):
    """ys[j] = X converted to its type, plus j (Splat's kernels)."""
    return [X.astype(numpy_dtype(t)) + numpy_dtype(t).type(j) for j, t in enumerate(types)]


def check(got, types):
    assert len(got) == len(types)
    for g, want in zip(got, expected(types)):
        assert g.dtype == want.dtype  # each tensor its own type, the node's
        np.testing.assert_array_equal(g, want)


def splat(X, *, out_dtypes):
    return tuple(X.astype(d) + d.type(j) for j, d in enumerate(out_dtypes))


def python_splat(fn=splat):
    return Op("Splat", [Input("X", "float")], [Output("ys", "T", shape="X", variadic=True, homogeneous=False)],
              types={"T": decl.MIXED}, compute=fn)


@pytest.fixture(scope="module")
def splat_kernel(tmp_path_factory):
    path = compile_kernels([NATIVE / "registration_kernels.cpp"], tmp_path_factory.mktemp("hetout") / "k.so")
    return ortcustom.load_kernels(path)["splat"]


def native_splat(kernel):
    return Op("Splat", [Input("X", "float")], [Output("ys", "T", shape="X", variadic=True, homogeneous=False)],
              types={"T": decl.MIXED}, native=kernel)


def splat_op(kind, request):
    return python_splat() if kind == "python" else native_splat(request.getfixturevalue("splat_kernel"))


@pytest.mark.parametrize("kind", ["python", "native"])
@pytest.mark.parametrize("types", [TYPES, ("double",), ("float", "float")])
def test_a_session_makes_each_tensor_of_the_models_type(kind, types, request):
    op = splat_op(kind, request)
    d = Domain("test.hetout." + kind).add(op)
    check(session(op, d, FEEDS, outputs=outputs(types)).run(None, FEEDS), types)


@pytest.mark.parametrize("kind", ["python", "native"])
def test_a_tensor_of_a_type_the_op_does_not_take_is_refused(kind, request):
    op = splat_op(kind, request)
    d = Domain("test.hetout.bad." + kind).add(op)
    with pytest.raises(Exception, match=r"Splat \(node 'n0'\): output ys \(the node's output 2\) has type int8; "
                                        r"Splat makes it one of float, int64, double"):
        session(op, d, FEEDS, outputs=outputs(("float", "double", "int8")))
    check(session(op, d, FEEDS, outputs=outputs(TYPES)).run(None, FEEDS), TYPES)  # the next session works


def untyped_model(domain):
    """Splat's y1 feeds an Identity and has no type in the model (no value_info, no graph output)."""
    node = helper.make_node("Splat", ["X"], ["y0", "y1"], name="n0", domain=domain)
    ident = helper.make_node("Identity", ["y1"], ["z"], name="id")
    graph = helper.make_graph([node, ident], "g", [helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("y0", onnx.TensorProto.FLOAT, None),
                               helper.make_tensor_value_info("z", onnx.TensorProto.FLOAT, None)])
    return for_runtime(helper.make_model(graph, opset_imports=[helper.make_opsetid(domain, 1),
                                                               helper.make_opsetid("", 17)]))


@pytest.mark.parametrize("kind", ["python", "native"])
def test_a_tensor_the_model_gives_no_type_is_refused(kind, request):
    """ORT itself refuses it when it types the graph, naming the node, the op and the output (the glue
    says the same where a runtime lets it through to kernel creation)."""
    op = splat_op(kind, request)
    d = Domain("test.hetout.untyped." + kind).add(op)
    with pytest.raises(Exception, match=r"Node \(n0\) Op \(Splat\) output arg \(y1\) type inference failed|"
                                        r"Splat \(node 'n0'\): output ys \(the node's output 1\) has no element type "
                                        r"in the model.*one of float, int64, double"):
        ort.InferenceSession(untyped_model(d.name).SerializeToString(), ortcustom.session_options(d), providers=CPU)


@pytest.mark.parametrize("ret, error", [
    (lambda X, out_dtypes: (X.astype(np.int64), X.astype(np.float64)),
     r"output ys \(the node's output 1\) has dtype float64; the node gives it float32"),
    (lambda X, out_dtypes: (X.astype(np.int64), np.array(["a"] * 4, object)),
     r"output ys \(the node's output 1\) has dtype object; the node gives it float32"),
])
def test_a_python_kernel_returning_another_dtype_is_an_error(ret, error):
    op = python_splat(lambda X, *, out_dtypes: ret(X, out_dtypes))
    d = Domain("test.hetout.pybad").add(op)
    sess = session(op, d, FEEDS, outputs=outputs(("int64", "float")))
    with pytest.raises(Exception, match=r"Splat \(node 'n0'\): " + error):
        sess.run(None, FEEDS)


def test_a_python_kernel_gets_every_outputs_dtype():
    seen = []
    op = Op("Two", [Input("X", "float")], [Output("n", "int64"), Output("ys", "T", variadic=True, homogeneous=False)],
            types={"T": decl.MIXED},
            compute=lambda X, *, out_dtypes: (seen.append(out_dtypes),
                                              tuple(np.zeros(1, d) for d in out_dtypes))[1])
    d = Domain("test.hetout.two").add(op)
    types = {"n": ("int64", None), "a": ("double", None), "b": ("float", None)}
    got = session(op, d, FEEDS, outputs=types).run(None, FEEDS)
    assert [g.dtype for g in got] == [np.int64, np.float64, np.float32]
    assert seen == [(np.dtype(np.int64), np.dtype(np.float64), np.dtype(np.float32))]


def test_a_direct_call_takes_the_types_as_out_types(splat_kernel):
    op = native_splat(splat_kernel)
    check(kernels.call(op, X, out_types=TYPES), TYPES)
    check(kernels.call(op, X, out_types=[np.float64, np.dtype(np.float32)]), ("double", "float"))
    check([kernels.call(op, X, out_types=("float32",))], ("float",))  # NumPy's names too; one output: an array
    outs = tuple(np.empty(4, numpy_dtype(t)) for t in TYPES)
    got = kernels.call(op, X, out_types=TYPES, out=outs)
    assert all(g is o for g, o in zip(got, outs))
    check(got, TYPES)


def test_a_direct_call_refuses_missing_or_wrong_out_types(splat_kernel):
    op = native_splat(splat_kernel)
    with pytest.raises(TypeError, match=r"Splat: output ys is variadic with homogeneous=False: give out_types="):
        kernels.call(op, X)
    with pytest.raises(TypeError, match=r"Splat: out_types\[1\] is 'int8'; output ys's tensors are each one of "
                                        r"float32, int64, float64"):
        kernels.call(op, X, out_types=("float", "int8"))
    with pytest.raises(TypeError, match=r"Splat: out_types gives 0 tensors for output ys; it has at least 1"):
        kernels.call(op, X, out_types=())
    with pytest.raises(ValueError, match=r"Splat: out has 1 arrays; the op has 2 outputs"):
        kernels.call(op, X, out_types=("float", "float"), out=np.empty(4, np.float32))
    with pytest.raises(ValueError, match=r"Splat: out must be a writeable C-contiguous float64 array .*output ys"):
        kernels.call(op, X, out_types=("double",), out=np.empty(4, np.float32))
    scale = Op("Scale", [Input("X", "float")], [Output("Y", "float", shape="X")],
               native=ortcustom.load_kernels(splat_kernel.library)["scale2"])
    with pytest.raises(TypeError, match=r"Scale: out_types is for an op whose last output is variadic with "
                                        r"homogeneous=False"):
        kernels.call(scale, X, out_types=("float",))


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    return registration_library("HETEROGENEOUS_OUT", tmp_path_factory.mktemp("hetout_lib"))


def test_a_plain_library_from_python_without_ortcustom(library, tmp_path):
    model = make_model(decl.SPLAT, decl.HETEROGENEOUS_OUT[0], FEEDS, outputs=outputs(TYPES))
    r = without_ortcustom([library], model, FEEDS, tmp_dir=tmp_path)
    assert r["failed"] is None, r
    check(r["outputs"], TYPES)
    bad = make_model(decl.SPLAT, decl.HETEROGENEOUS_OUT[0], FEEDS, outputs=outputs(("float", "uint8")))
    r = without_ortcustom([library], bad, FEEDS, tmp_dir=tmp_path)
    assert r["failed"] == "session" and "output ys (the node's output 1) has type uint8" in r["error"], r


@needs_c_library
def test_a_plain_library_in_a_c_host(library):
    r = run_host(make_model(decl.SPLAT, decl.HETEROGENEOUS_OUT[0], FEEDS, outputs=outputs(TYPES)), FEEDS,
                 libraries=[library])
    assert r.returncode == 0, r.stdout
    check([r.outputs[f"y{j}"] for j in range(len(TYPES))], TYPES)


def test_the_schema_leaves_each_type_to_the_model():
    op = python_splat()
    d = Domain("test.hetout.schema").add(op)
    model = make_model(op, d, FEEDS, outputs={f"y{j}": (t, [4]) for j, t in enumerate(TYPES)})
    onnx.checker.check_model(model, full_check=True)
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    assert [o.type.tensor_type.elem_type for o in inferred.graph.output] == [onnx.helper.np_dtype_to_tensor_dtype(
        numpy_dtype(t)) for t in TYPES]
    with pytest.raises(ValueError, match=r"output 'ys' of Splat is variadic with homogeneous=False: .*give outputs="):
        make_model(op, d, FEEDS)


def test_declarations():
    with pytest.raises(ValueError, match=r"output 'ys': homogeneous=False .* is for a variadic output"):
        Output("ys", "T", homogeneous=False)
    with pytest.raises(ValueError, match=r"torch='x::splat': output 'ys' is variadic with homogeneous=False"):
        Op("Splat", [Input("X", "float")], [Output("ys", "T", variadic=True, homogeneous=False)],
           types={"T": decl.MIXED}, native="registration_ops:splat", torch="x::splat")


def test_reference_ops_refuses_a_compute_function_that_needs_the_nodes_output_types():
    # onnx.reference hands an op its inputs, never the node's output types: clear, at once
    with pytest.raises(ValueError, match=r"op 'Splat': its compute function takes out_dtypes .* give the op a "
                                         r"reference= function"):
        ortcustom.reference_ops(ortcustom.Domain("t").add(python_splat()))
    # a reference that picks its types itself runs
    from onnx.reference import ReferenceEvaluator

    op = dataclasses.replace(python_splat(), reference=lambda X: (X.astype(np.int64), X + 1))
    d = Domain("test.hetout.ref").add(op)
    model = make_model(op, d, FEEDS, outputs=outputs(("int64", "float")))
    got = ReferenceEvaluator(model, new_ops=ortcustom.reference_ops(d)).run(None, FEEDS)
    check(got, ("int64", "float"))
