"""The op-definition API: one declaration gives types, attributes, optional/variadic/CPU-side
inputs, versions, shape inference, the ONNX schema and a reference implementation."""
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import ortcustom
import ortcustom.schemas
from ortcustom.session import ort_version
from ortcustom import Attr, Domain, Input, Op, Output, _customop
from ortcustom.ops import GroupNorm, Inverse
from ortcustom.testing import for_runtime, make_model

from helpers import CPU, run_threads, session, well_conditioned

# ORT's own custom-op test examples, in a few lines each.
MyCustomOp = Op("MyCustomOp", inputs=[Input("X", "float"), Input("Y", "float")],
                outputs=[Output("Z", "float", shape="X")], compute=lambda X, Y: X + Y)


def _slice_shape(shapes, attrs):
    return None  # depends on the values of starts/ends: unknown until run time


SliceLike = Op("SliceLike",
               inputs=[Input("data", "T"), Input("starts", "int64", cpu=True), Input("ends", "int64", cpu=True)],
               outputs=[Output("out", "T", shape=_slice_shape)],
               types={"T": ["float", "double", "int64"]},
               compute=lambda data, starts, ends: data[tuple(slice(s, e) for s, e in zip(starts, ends))].copy())


def test_my_custom_op_add():
    d = Domain("test.ops").add(MyCustomOp)
    x, y = np.arange(6, dtype=np.float32).reshape(2, 3), np.ones((2, 3), np.float32)
    sess = session(MyCustomOp, d, {"X": x, "Y": y})
    np.testing.assert_array_equal(sess.run(None, {"X": x, "Y": y})[0], x + y)


def test_slice_like_with_int64_cpu_inputs():
    d = Domain("test.ops").add(SliceLike)
    data = np.arange(20, dtype=np.float64).reshape(4, 5)
    feeds = {"data": data, "starts": np.array([1, 0], np.int64), "ends": np.array([3, 4], np.int64)}
    sess = session(SliceLike, d, feeds)
    np.testing.assert_array_equal(sess.run(None, feeds)[0], data[1:3, 0:4])
    desc = _customop.describe(d)
    assert desc[0]["input_memory"] == ["default", "cpu", "cpu"]  # what GetInputMemoryType tells ORT


def test_type_constraints_make_one_binding_per_type_and_a_guard():
    desc = _customop.describe(Domain("t").add(SliceLike))
    assert [b["input_types"][0] for b in desc] == ["float", "double", "int64", "any"]
    assert [b["type_guard"] for b in desc] == [False, False, False, True]
    assert all(b["output_types"][0] == b["input_types"][0] for b in desc)
    assert {b["version"] for b in desc} == {17}


def test_type_not_accepted_fails_at_session_creation_listing_what_is_accepted():
    d = Domain("test.ops").add(SliceLike)
    inputs = {"data": (np.int32, [4]), "starts": (np.int64, [1]), "ends": (np.int64, [1])}
    model = make_model(SliceLike, d, inputs, outputs={"out": (np.int32, None)})
    with pytest.raises(Exception) as e:
        ort.InferenceSession(model.SerializeToString(), ortcustom.session_options(d), providers=CPU)
    msg = str(e.value)
    assert "SliceLike (node 'n0'): no kernel for input types (data: int32, starts: int64, ends: int64)" in msg
    assert "T in {float, double, int64}" in msg


AttrOp = Op("AttrOp", inputs=[Input("X", "double")], outputs=[Output("Y", "double", shape="X")],
            attrs=[Attr("i", "int", default=1), Attr("f", "float", default=0.5),
                   Attr("s", "string", default="ab"), Attr("ints", "ints", default=(1, 2)),
                   Attr("floats", "floats", default=(0.25,)), Attr("need", "int", check=None),
                   Attr("pos", "float", default=1.0, check=lambda v: None if v > 0 else (_ for _ in ()).throw(ValueError("must be > 0")))],
            compute=lambda X, **a: X + a["i"] + a["f"] + sum(a["ints"]) + sum(a["floats"]) + len(a["s"]) + a["need"])


@pytest.mark.parametrize("attrs, expect", [
    ({"need": 10}, 1 + 0.5 + 3 + 0.25 + 2 + 10),
    ({"need": 0, "i": 5, "f": 1.5, "s": "abcd", "ints": [4], "floats": [1.0, 2.0]}, 5 + 1.5 + 4 + 3 + 4),
])
def test_attributes_of_every_kind_with_defaults(attrs, expect):
    d = Domain("test.attrs").add(AttrOp)
    x = np.zeros(3)
    sess = session(AttrOp, d, {"X": x}, attrs=attrs)
    np.testing.assert_allclose(sess.run(None, {"X": x})[0], expect)


@pytest.mark.parametrize("attrs, expect", [
    ({}, "required attribute 'need' (int) is missing"),
    ({"need": 1.5}, "attribute 'need' must be of type int, but the node gives a float"),
    ({"need": 1, "s": 3}, "attribute 's' must be of type string, but the node gives an int"),
    ({"need": 1, "ints": [1.5]}, "attribute 'ints' must be of type ints, but the node gives a floats"),
    ({"need": 1, "pos": -1.0}, "attribute pos=-1.0 is invalid: must be > 0"),
])
def test_attribute_errors_at_session_creation(attrs, expect):
    d = Domain("test.attrs").add(AttrOp)
    model = make_model(AttrOp, d, {"X": (np.float64, [3])}, attrs=attrs)
    with pytest.raises(Exception) as e:
        ort.InferenceSession(model.SerializeToString(), ortcustom.session_options(d), providers=CPU)
    assert "AttrOp (node 'n0')" in str(e.value) and expect in str(e.value)


def test_declaration_errors_are_python_errors():
    with pytest.raises(ValueError, match="exactly one of native= .* or compute="):
        Op("A", [Input("X", "float")], [Output("Y", "float")])
    nope = Op("A", [Input("X", "float")], [Output("Y", "float")], native="nope")  # pure data: no lookup yet
    with pytest.raises(ValueError, match="op 'A': no native kernel 'nope'"):
        nope.kernel  # found on first use
    with pytest.raises(ValueError, match="neither a type constraint"):
        Op("A", [Input("X", "T")], [Output("Y", "float")], compute=abs)
    with pytest.raises(ValueError, match="unknown element type 'float33'"):
        Op("A", [Input("X", "T")], [Output("Y", "T")], types={"T": ["float33"]}, compute=abs)
    with pytest.raises(ValueError, match="only the last input or output may be variadic"):
        Op("A", [Input("X", "float", variadic=True), Input("Y", "float")], [Output("Z", "float")], compute=abs)
    with pytest.raises(ValueError, match="default of attribute 'a' is invalid"):
        Op("A", [Input("X", "float")], [Output("Y", "float")], attrs=[Attr("a", "int", default="x")], compute=abs)
    with pytest.raises(ValueError, match="until must be an int >= since"):
        Op("A", [Input("X", "float")], [Output("Y", "float")], since=3, until=2, compute=abs)
    with pytest.raises(ValueError, match="takes its shape from 'Q'"):
        Op("A", [Input("X", "float")], [Output("Y", "float", shape="Q")], compute=abs)


def _maybe_add(X, Y=None, Z=None):
    out = X.copy()
    for v in (Y, Z):
        if v is not None:
            out += v
    return out, (out * 2 if Z is not None else None)


OptionalOp = Op("OptionalOp",
                inputs=[Input("X", "float"), Input("Y", "float", optional=True), Input("Z", "float", optional=True)],
                outputs=[Output("S", "float", shape="X"), Output("D", "float", shape="X", optional=True)],
                compute=_maybe_add)


@pytest.mark.parametrize("present", [("X",), ("X", "Y"), ("X", "Z"), ("X", "Y", "Z")])
def test_optional_inputs_absent_anywhere(present):
    d = Domain("test.opt").add(OptionalOp)
    vals = {n: np.full(3, float(i + 1), np.float32) for i, n in enumerate("XYZ")}
    inputs = {n: (vals[n] if n in present else None) for n in "XYZ"}
    sess = session(OptionalOp, d, inputs, outputs={"S": (np.float32, None)})
    # inferred at session creation despite absent inputs; ORT < 1.24 would crash on such a node if
    # the op had a shape function, so there it has none (see shape_fn_safe in glue/ort_op.cpp)
    assert sess.get_outputs()[0].shape == ([3] if ort_version() >= (1, 24) else [])
    got = sess.run(None, {n: vals[n] for n in present})[0]
    np.testing.assert_array_equal(got, sum(vals[n] for n in present))


def test_optional_output_requested():
    d = Domain("test.opt").add(OptionalOp)
    x = np.ones(2, np.float32)
    sess = session(OptionalOp, d, {"X": x, "Y": None, "Z": x}, outputs={"S": (np.float32, None), "D": (np.float32, None)})
    s, dbl = sess.run(None, {"X": x, "Z": x})
    np.testing.assert_array_equal(dbl, 2 * s)


SumOp = Op("SumAll", inputs=[Input("xs", "T", variadic=True)], outputs=[Output("y", "T", shape="xs")],
           types={"T": ["float", "int64"]}, compute=lambda *xs: sum(xs[1:], xs[0].copy()))


@pytest.mark.parametrize("n", [1, 2, 5])
def test_variadic_inputs(n):
    d = Domain("test.var").add(SumOp)
    from onnx import TensorProto, helper

    names = [f"x{i}" for i in range(n)]
    graph = helper.make_graph([helper.make_node("SumAll", names, ["y"], domain="test.var")], "g",
                              [helper.make_tensor_value_info(x, TensorProto.INT64, [2]) for x in names],
                              [helper.make_tensor_value_info("y", TensorProto.INT64, None)])
    model = for_runtime(helper.make_model(graph, opset_imports=[helper.make_opsetid("test.var", 1)]))
    sess = ort.InferenceSession(model.SerializeToString(), ortcustom.session_options(d), providers=CPU)
    feeds = {x: np.array([i, 10 * i], np.int64) for i, x in enumerate(names)}
    np.testing.assert_array_equal(sess.run(None, feeds)[0], sum(feeds.values()))


def test_two_versions_of_one_op_in_one_domain():
    v1 = Op("Scale", [Input("X", "float")], [Output("Y", "float", shape="X")], until=1, compute=lambda X: X * 2)
    v2 = Op("Scale", [Input("X", "float")], [Output("Y", "float", shape="X")], since=2, compute=lambda X: X * 3)
    d = Domain("test.ver").add(v1, v2)
    desc = _customop.describe(d)
    assert [(b["since"], b["until"]) for b in desc] == [(1, 1), (2, 2147483647)]
    x = np.ones(2, np.float32)
    for version, factor in ((1, 2), (2, 3), (5, 3)):
        sess = session(v1, d, {"X": x}, domain_version=version, so=ortcustom.session_options(d.at(version)))
        np.testing.assert_array_equal(sess.run(None, {"X": x})[0], factor * x)
    # ORT takes one version per name and domain: registering both at once is a clear error
    with pytest.raises(ValueError, match=r"op 'Scale' for versions \[1, 1\], \[2, inf\].*domain.at"):
        ortcustom.session_options(d)
    # the onnx schemas know both versions, once asked to
    ortcustom.schemas.register(d)
    assert onnx.defs.get_schema("Scale", 1, "test.ver").since_version == 1
    assert onnx.defs.get_schema("Scale", 7, "test.ver").since_version == 2
    # a model older than the op's first version finds no kernel
    with pytest.raises(Exception, match="Scale"):
        session(v1, d, {"X": x}, domain_version=1, so=ortcustom.session_options(Domain("test.ver").add(v2)))


def test_shape_rule_from_a_function_with_attributes():
    def rule(shapes, attrs):
        x = shapes["X"]
        return None if x is None else x[:-1] + (attrs["k"],)

    TopK = Op("FirstK", [Input("X", "float")], [Output("Y", "float", shape=rule)],
              attrs=[Attr("k", "int", default=2)], compute=lambda X, k: np.ascontiguousarray(X[..., :k]))
    d = Domain("test.shape").add(TopK)
    model = make_model(TopK, d, {"X": (np.float32, ["n", 5])}, outputs={"Y": (np.float32, None)}, attrs={"k": 3})
    model.graph.output[0].type.tensor_type.ClearField("shape")
    sess = ort.InferenceSession(model.SerializeToString(), ortcustom.session_options(d), providers=CPU)
    assert sess.get_outputs()[0].shape == ["n", 3]
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    dims = inferred.graph.output[0].type.tensor_type.shape.dim
    assert [d.dim_param or d.dim_value for d in dims] == ["n", 3]


def test_onnx_checker_and_shape_inference_know_our_ops():
    d = Domain("ortcustom").add(Inverse, GroupNorm)
    ortcustom.schemas.register(d)
    graph = helper.make_graph(
        [helper.make_node("Inverse", ["X"], ["Xi"], domain="ortcustom"),
         helper.make_node("GroupNorm", ["Xi", "", "s", "b"], ["Y"], domain="ortcustom", num_groups=2, epsilon=1e-3)],
        "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 4, 3, 3]),
              helper.make_tensor_value_info("s", TensorProto.FLOAT, [4]),
              helper.make_tensor_value_info("b", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["N", 4, 3, 3])])
    model = for_runtime(helper.make_model(graph, opset_imports=[helper.make_opsetid("ortcustom", 1),
                                                                helper.make_opsetid("", 17)]))
    onnx.checker.check_model(model, full_check=True)
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    xi = {v.name: v for v in inferred.graph.value_info}["Xi"].type.tensor_type
    assert xi.elem_type == TensorProto.FLOAT and [x.dim_param or x.dim_value for x in xi.shape.dim] == ["N", 4, 3, 3]
    bad = make_model(Inverse, d, {"X": (np.int32, [2, 2])}, outputs={"Y": (np.int32, [2, 2])})
    with pytest.raises(onnx.shape_inference.InferenceError, match="unsupported type: tensor\\(int32\\)"):
        onnx.checker.check_model(bad, full_check=True)
    # the NumPy reference gives what ORT gives
    rng = np.random.default_rng(0)
    feeds = {"X": (rng.standard_normal((2, 4, 3, 3)) + 3 * np.eye(3)).astype(np.float32),
             "s": rng.standard_normal(4).astype(np.float32), "b": rng.standard_normal(4).astype(np.float32)}
    ref = ReferenceEvaluator(model, new_ops=ortcustom.reference_ops(d)).run(None, feeds)[0]
    got = ort.InferenceSession(model.SerializeToString(), ortcustom.session_options(d), providers=CPU).run(None, feeds)[0]
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)


def test_python_kernel_errors_are_ort_errors_and_the_session_survives():
    def picky(X):
        if X[0] < 0:
            raise ValueError("negative first element")
        return X * 2

    Picky = Op("Picky", [Input("X", "float")], [Output("Y", "float", shape="X")], compute=picky)
    WrongDtype = Op("WrongDtype", [Input("X", "float")], [Output("Y", "float")], compute=lambda X: X.astype(np.float64))
    d = Domain("test.err").add(Picky, WrongDtype)
    sess = session(Picky, d, {"X": (np.float32, [2])})
    with pytest.raises(Exception) as e:
        sess.run(None, {"X": np.array([-1, 1], np.float32)})
    msg = str(e.value)
    assert "Picky (node 'n0'): the Python kernel raised ValueError: negative first element" in msg and "picky" in msg
    np.testing.assert_array_equal(sess.run(None, {"X": np.array([1, 1], np.float32)})[0], [2, 2])
    sess = session(WrongDtype, d, {"X": (np.float32, [2])})
    with pytest.raises(Exception, match="output Y has dtype float64; the op declares float32"):
        sess.run(None, {"X": np.ones(2, np.float32)})


def test_one_kernel_object_from_several_threads():
    d = Domain("com.microsoft").add(Inverse)
    sess = session(Inverse, d, {"X": (np.float64, ["b", 4, 4])})

    def work(seed):
        rng = np.random.default_rng(seed)
        for _ in range(50):
            x = well_conditioned(rng, (8, 4, 4), np.float64)
            np.testing.assert_allclose(sess.run(None, {"X": x})[0], np.linalg.inv(x), rtol=1e-8, atol=1e-10)

    run_threads(4, work)
