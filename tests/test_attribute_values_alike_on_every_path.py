"""An attribute's value is normalized once (float32, defaults) and every path (session, direct call,
torch op, export, shape rule) sees the same value, and refuses a bad one with the same words."""
import re

import numpy as np
import onnxruntime as ort
import pytest

import ortcustom
from helpers import CPU, session
from ortcustom import Attr, Domain, Input, Op, Output, kernels
from ortcustom.ops import GroupNorm
from ortcustom.registry import InvalidAttribute, checked, normalize
from ortcustom.testing import make_model


def test_a_shape_rule_sees_declared_defaults_of_every_kind():
    """Mutant: a shape rule given only the attributes a node sets (or only int/float ones)."""
    seen = {}

    def shape(shapes, attrs):
        seen.update(attrs)
        return (shapes["X"][0], attrs["k"], len(attrs["ks"]), len(attrs["s"]))

    op = Op("FirstK", [Input("X", "float")], [Output("Y", "float", shape=shape)],
            attrs=[Attr("k", "int", default=2), Attr("ks", "ints", default=(1, 2, 3)), Attr("s", "string", default="ab"),
                   Attr("f", "float", default=0.1)],
            compute=lambda X, k, ks, s, f: np.zeros((X.shape[0], k, len(ks), len(s)), np.float32))
    d = Domain("one.shapes").add(op)
    model = make_model(op, d, {"X": (np.float32, ["n", 3])}, outputs={"Y": (np.float32, None)})
    sess = ort.InferenceSession(model.SerializeToString(), ortcustom.session_options(d), providers=CPU)
    assert sess.get_outputs()[0].shape == ["n", 2, 3, 2]
    assert seen["f"] == normalize(op.attrs[3], 0.1) == float(np.float32(0.1))  # as the node carries it
    assert sess.run(None, {"X": np.ones((4, 3), np.float32)})[0].shape == (4, 2, 3, 2)


def test_float_attributes_are_float32_in_every_path():
    """Mutant: direct calls (and torch ops) not rounding float attributes to float32: a session's
    kernel gets float32 (ONNX stores it so), so the two would differ in the last bits."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 4, 5))  # float64: sensitive to epsilon's last bits
    d = Domain("one.floats").add(GroupNorm)
    y = session(GroupNorm, d, {"X": x}, attrs={"num_groups": 2, "epsilon": 0.1}).run(None, {"X": x})[0]
    np.testing.assert_array_equal(kernels.group_norm(x, 2, epsilon=0.1), y)
    assert not np.array_equal(GroupNorm.reference(x, None, epsilon=0.1, num_groups=2),
                              GroupNorm.reference(x, None, epsilon=float(np.float32(0.1)), num_groups=2))


def test_attribute_bounds_read_alike_in_python_and_the_glue():
    """Attr(min=, max=, choices=) is checked by the glue (sessions, plain libraries) and by Python
    (direct calls, export): the same words."""
    x = np.ones((1, 2, 3), np.float32)
    d = Domain("one.bounds").add(GroupNorm)
    with pytest.raises(Exception) as e:
        session(GroupNorm, d, {"X": x}, attrs={"num_groups": 1, "epsilon": -0.5})
    with pytest.raises(ValueError) as f:
        kernels.group_norm(x, 1, epsilon=-0.5)
    words = "attribute epsilon=-0.5 is invalid: must be >= 0"
    assert words in str(e.value) and words in str(f.value)
    with pytest.raises(ValueError, match="min, max and choices are for int and float attributes"):
        Op("B", [Input("X", "float")], [Output("Y", "float")], attrs=[Attr("s", "string", "", min=0)],
           compute=lambda X, s: X)


@pytest.mark.parametrize("eps, text", [(-1.0, "-1.0"), (-1e-5, "-9.99999975e-06"), (-0.1, "-0.100000001"),
                                       (-3e38, "-3.00000001e+38"), (float("nan"), "nan"), (-2, "-2.0")])
def test_a_refused_value_is_worded_alike_by_the_glue_and_by_python(eps, text):
    words = f"attribute epsilon={text} is invalid: must be >= 0"
    with pytest.raises(InvalidAttribute, match=f"^{re.escape(words)}$"):  # Python: direct call, torch op, export
        checked(next(a for a in GroupNorm.attrs if a.name == "epsilon"), eps)
    with pytest.raises(ValueError, match=f"^GroupNorm: {re.escape(words)}$"):
        kernels.group_norm(np.ones((2, 4, 3), np.float32), 2, epsilon=eps)
    d = Domain("ortcustom").add(GroupNorm)
    x = (np.float32, [2, 4, 3])
    with pytest.raises(Exception, match=re.escape(f"GroupNorm (node 'n0'): {words}")):  # the glue
        session(GroupNorm, d, {"X": x, "num_groups": (np.int64, []), "scale": (np.float32, [4]), "bias": (np.float32, [4])},
                attrs={"epsilon": float(eps), "num_groups": 2})


def test_a_check_function_refusal_is_worded_as_a_bound_is():
    def even(v):
        if v % 2:
            raise ValueError("must be even")

    op = Op("Even", [Input("X", "float")], [Output("Y", "float", shape="X")],
            attrs=[Attr("k", "int", 0, check=even)], compute=lambda X, k: X)
    x = np.ones(2, np.float32)
    with pytest.raises(Exception, match=re.escape("Even (node 'n0'): attribute k=3 is invalid: must be even")):
        session(op, Domain("test.even").add(op), {"X": x}, attrs={"k": 3})
    with pytest.raises(InvalidAttribute, match=re.escape("attribute k=3 is invalid: must be even")):
        checked(op.attrs[0], 3)


@pytest.mark.parametrize("path", ["session", "direct", "library"])
def test_a_value_at_its_bound_is_accepted_and_one_past_it_refused(path):
    """Bounds are inclusive on every path: epsilon >= 0 takes 0 (a bound made exclusive refuses it)."""
    x = np.random.default_rng(0).standard_normal((2, 4, 3)).astype(np.float32)

    def run(eps):
        if path == "direct":
            return kernels.group_norm(x, 2, epsilon=eps)
        d = Domain("ortcustom").add(GroupNorm)
        so = ortcustom.session_options(d) if path == "session" else ort.SessionOptions()
        if path == "library":
            so.register_custom_ops_library(ortcustom.get_library_path())
        return session(GroupNorm, d, {"X": x}, attrs={"num_groups": 2, "epsilon": eps}, so=so).run(None, {"X": x})[0]

    np.testing.assert_allclose(run(0.0), GroupNorm.reference(x, None, epsilon=0.0, num_groups=2), rtol=1e-4, atol=1e-4)
    with pytest.raises(Exception, match=re.escape("attribute epsilon=-1.40129846e-45 is invalid: must be >= 0")):
        run(-float(np.float32(1e-45)))  # the float32 just below 0


def test_a_bool_is_not_an_int_attribute_outside_export():
    """Bug: bools taken as ints (isinstance(True, int)): a declaration's default or a direct call's
    value True would become 1 silently. (Export takes a torch bool as 0/1 on purpose: ONNX has no
    bool attributes, and torch's signatures have bools.)"""
    with pytest.raises(TypeError, match="expected an int, got True"):
        checked(Attr("k", "int"), True)
    with pytest.raises(ValueError, match="default of attribute 'k' is invalid: expected an int, got True"):
        Op("B", [Input("X", "float")], [Output("Y", "float")], attrs=[Attr("k", "int", True)], compute=lambda X, k: X)
    with pytest.raises(TypeError, match="GroupNorm: attribute num_groups: expected an int, got True"):
        kernels.group_norm(np.ones((1, 2, 3), np.float32), num_groups=True)
    from ortcustom.attr_check import checked as export_checked
    assert export_checked(Attr("k", "int"), True) == 1


def test_the_numpy_reference_gets_declared_defaults_as_a_session_does():
    """Bug: onnx's ReferenceEvaluator handing our reference None for an attribute the node omits."""
    from onnx.reference import ReferenceEvaluator

    op = Op("Times", [Input("X", "float")], [Output("Y", "float", shape="X")], attrs=[Attr("k", "int", 3)],
            compute=lambda X, k: X * np.float32(k))
    d = Domain("test.times").add(op)
    x = np.arange(4, dtype=np.float32)
    model = make_model(op, d, {"X": x})
    ref = ReferenceEvaluator(model, new_ops=ortcustom.reference_ops(d)).run(None, {"X": x})[0]
    got = session(op, d, {"X": x}).run(None, {"X": x})[0]
    np.testing.assert_array_equal(ref, 3 * x)
    np.testing.assert_array_equal(got, ref)
