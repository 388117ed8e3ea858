"""One of each: an attribute is normalized once (float32, defaults) and every path sees the same
value; the checks that a mutation of the glue would break (the issue's surviving mutants:
tests/test_contract.py has the kernel failing without a message)."""
import numpy as np
import onnxruntime as ort
import pytest

import ortcustom
from helpers import CPU, session
from ortcustom import Attr, Domain, Input, Op, Output, kernels
from ortcustom.ops import GroupNorm
from ortcustom.registry import normalize
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


def test_out_next_to_an_input_is_not_an_overlap():
    """Mutant: the overlap test made `<=`: an out array that ends where X starts (or starts where X
    ends) shares no byte with it and must be accepted."""
    buf = np.zeros((3, 2, 2), np.float32)
    x, out = buf[0:1], buf[1:2]  # adjacent: out starts where x ends
    x[...] = 2 * np.eye(2)
    assert kernels.inverse(x, out=out) is out
    np.testing.assert_array_equal(out, np.eye(2)[None] / 2)
    x2, out2 = buf[2:3], buf[1:2]  # out ends where x2 starts
    x2[...] = 4 * np.eye(2)
    kernels.inverse(x2, out=out2)
    np.testing.assert_array_equal(out2, np.eye(2)[None] / 4)
    with pytest.raises(ValueError, match="out overlaps X"):
        kernels.inverse(buf[0:2], out=buf[1:3])


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
