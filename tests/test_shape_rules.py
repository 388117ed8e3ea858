"""Output(shape=f): a rule that fails, or returns something that is no shape, is an error naming
the op (and the node, at session creation: the rules run again when ORT creates the kernel, since
ORT ignores shape inference's errors); a rule taking other than (shapes, attrs) is refused when
declared; and the kernel's outputs are held to what the rule says (its known dims) at each run, as
for shape="X", in sessions and direct calls. Before, a failing rule left the output unknown, a
string declared a rank-7 shape, and a wrong rule was trusted: ORT folded Shape(T) from it."""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import ortcustom
from ortcustom import Attr, Domain, Input, Op, Output, kernels
from ortcustom.inference import ShapeRuleError
from ortcustom.ops import Inverse
from ortcustom.testing import for_runtime
from helpers import CPU

X = np.arange(6, dtype=np.float32).reshape(2, 3)


def with_rule(rule, name="Ruled", compute=lambda X: X.copy(), **kw):
    return Op(name, [Input("X", "float")], [Output("T", "float", shape=rule)], compute=compute, **kw)


def model(op, domain, shape_of_t=False, x_shape=(2, 3)):
    """X -> op -> T (an output); with `shape_of_t`, also S = Shape(T)."""
    nodes = [helper.make_node(op.name, ["X"], ["T"], domain=domain.name, name="n0")]
    outputs = [helper.make_tensor_value_info("T", TensorProto.FLOAT, None)]
    if shape_of_t:
        nodes.append(helper.make_node("Shape", ["T"], ["S"], name="shape"))
        outputs.insert(0, helper.make_tensor_value_info("S", TensorProto.INT64, None))
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, list(x_shape))], outputs)
    return for_runtime(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17),
                                                            helper.make_opsetid(domain.name, 1)])).SerializeToString()


def session(op, **kw):
    d = Domain("rules." + op.name).add(op)
    return ort.InferenceSession(model(op, d, **kw), ortcustom.session_options(d), providers=CPU)


def broken(shapes, attrs):
    raise KeyError("no such input")


class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("no words")


def unprintable(shapes, attrs):
    raise Unprintable()


@pytest.mark.parametrize("rule, why", [
    (broken, "the shape rule of output T raised KeyError: 'no such input'"),
    (unprintable, "the shape rule of output T raised Unprintable (its message could not be made: its __str__ "
                  "raised RuntimeError)"),
    (lambda s, a: "garbage", "the shape rule of output T returned 'garbage', which is not a shape"),
    (lambda s, a: 6, "the shape rule of output T returned 6, which is not a shape"),
    (lambda s, a: {"X": 1}, "the shape rule of output T returned {'X': 1}, which is not a shape"),
    (lambda s, a: (2, -3), "the shape rule of output T returned (2, -3): dim -3 is not an int >= 0"),
    (lambda s, a: (2, 3.0), "the shape rule of output T returned (2, 3.0): dim 3.0 is not an int >= 0"),
    (lambda s, a: (2, True), "the shape rule of output T returned (2, True): dim True is not an int >= 0"),
    (lambda s, a: (2, ""), "the shape rule of output T returned (2, ''): dim '' is not an int >= 0"),
    (lambda s, a: (1,) * 17, "the shape rule of output T says rank 17; outputs have rank 0 to 16"),
], ids=["raises", "unprintable", "string", "int", "dict", "negative", "float", "bool", "empty-name", "rank-17"])
def test_a_failing_rule_fails_the_session_naming_op_node_and_output(rule, why):
    with pytest.raises(Exception) as e:
        session(with_rule(rule))
    assert f"Ruled (node 'n0'): {why}" in str(e.value)


def test_a_failing_rule_is_an_onnx_error_naming_the_op():
    """The same rule serves onnx's shape inference (the schema registered with onnx)."""
    import onnx
    import onnx.shape_inference

    import ortcustom.schemas

    op = with_rule(broken)
    d = Domain("rules.onnx").add(op)
    ortcustom.schemas.register(d)  # (declaring registers nothing with onnx)
    with pytest.raises(Exception, match="Ruled: the shape rule of output T raised KeyError"):
        onnx.shape_inference.infer_shapes(onnx.load_from_string(model(op, d)), strict_mode=True)


@pytest.mark.parametrize("rule", [lambda shapes: shapes["X"], lambda: None, lambda a, b, c: None])
def test_a_rule_of_the_wrong_arity_is_refused_when_declared(rule):
    with pytest.raises(ValueError, match=r"output 'T': a shape rule is called as f\(shapes, attrs\); <lambda>\("):
        Output("T", "float", shape=rule)


def test_rules_with_defaults_or_varargs_are_fine():
    Output("T", "float", shape=lambda shapes, attrs=None, extra=1: None)
    Output("T", "float", shape=lambda *args: None)


def test_shape_must_be_a_name_or_a_function():
    with pytest.raises(ValueError, match="shape is None, an input's name or a function"):
        Output("T", "float", shape=(2, 3))


def test_a_wrong_rule_fails_the_run_not_the_folded_shape():
    """The rule says (3, 2) for a (2, 3) input; the kernel gives (2, 3). ORT folds Shape(T) from the
    rule, so S alone would be [3 2]: the run now fails instead, naming op, node, output and shapes.
    (Were T consumed by nothing but the folded Shape, ORT would not run the node at all: then the
    rule's word is the only one there is.)"""
    sess = session(with_rule(lambda s, a: s["X"][::-1]), shape_of_t=True)
    with pytest.raises(Exception) as e:
        sess.run(None, {"X": X})
    assert "Ruled (node 'n0'): output T: the kernel gave shape (2, 3); the op's shape rule says (3, 2)" in str(e.value)


def test_a_rule_with_unknown_or_symbolic_dims_checks_the_known_ones():
    sess = session(with_rule(lambda s, a: (s["X"][0], None)))
    np.testing.assert_array_equal(sess.run(None, {"X": X})[0], X)
    sess = session(with_rule(lambda s, a: (5, "m")), x_shape=("n", 3))
    with pytest.raises(Exception, match=r"output T: the kernel gave shape \(2, 3\); the op's shape rule says "
                                        r"\(5, -1\) \(-1: any size\)"):
        sess.run(None, {"X": X})
    sess = session(with_rule(lambda s, a: (1, 2, 3)))
    with pytest.raises(Exception, match=r"the kernel gave shape \(2, 3\); the op's shape rule says \(1, 2, 3\)"):
        sess.run(None, {"X": X})


def test_a_right_rule_runs():
    sess = session(with_rule(lambda s, a: (s["X"][0], a["k"]), compute=lambda X, k: X[:, :k].copy(),
                             attrs=[Attr("k", "int", default=2)]))
    assert sess.get_outputs()[0].shape == [2, 2]
    np.testing.assert_array_equal(sess.run(None, {"X": X})[0], X[:, :2])


# ---- a native kernel with a rule: sessions and direct calls ------------------------------------------

def native_with_rule(rule):
    return Op("InvRuled", [Input("X", "float")], [Output("Y", "float", shape=rule)], native=Inverse.native)


def test_a_native_kernel_is_held_to_its_rule_in_a_session():
    op = native_with_rule(lambda s, a: None if s["X"] is None else (s["X"][0] + 1,) + s["X"][1:])
    d = Domain("rules.native").add(op)
    graph = helper.make_graph([helper.make_node("InvRuled", ["X"], ["Y"], domain=d.name, name="inv")], "g",
                              [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 2, 2])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    m = for_runtime(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(d.name, 1)]))
    sess = ort.InferenceSession(m.SerializeToString(), ortcustom.session_options(d), providers=CPU)
    with pytest.raises(Exception, match=r"InvRuled \(node 'inv'\): output Y: the kernel gave shape \(1, 2, 2\); "
                                        r"the op's shape rule says \(2, 2, 2\)"):
        sess.run(None, {"X": np.eye(2, dtype=np.float32)[None]})


def test_a_direct_call_is_held_to_the_rule():
    x = 2 * np.eye(2, dtype=np.float32)[None]
    good = native_with_rule(lambda s, a: s["X"])
    np.testing.assert_array_equal(kernels.call(good, x), x / 4)
    wrong = native_with_rule(lambda s, a: (2,) + s["X"][1:])
    with pytest.raises(RuntimeError, match=r"^InvRuled: output Y: the kernel gave shape \(1, 2, 2\); the op's shape "
                                         r"rule says \(2, 2, 2\)$"):
        kernels.call(wrong, x)
    with pytest.raises(ShapeRuleError, match="^InvRuled: the shape rule of output Y raised KeyError: 'no such input'$"):
        kernels.call(native_with_rule(broken), x)
    with pytest.raises(ValueError, match="InvRuled: the shape rule of output Y returned 'x', which is not a shape"):
        kernels.call(native_with_rule(lambda s, a: "x"), x)
