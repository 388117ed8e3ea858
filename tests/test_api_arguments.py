"""The Python API (Op, Domain, register, session_options, ortcustom.kernels) rejects bad arguments
with clear errors, and the direct kernel calls handle NaN and empty inputs."""
import numpy as np
import pytest

import ortcustom
from helpers import run_python
from known_good import Double
from ortcustom import Attr, Domain, Input, Op, Output
from ortcustom.kernels import group_norm as direct_group_norm
from ortcustom.ops import Inverse


@pytest.mark.parametrize("make, exc, match", [
    (lambda: Op("", [Input("X", "float")], [Output("Y", "float")], compute=abs), ValueError, "non-empty name"),
    (lambda: Op("A", [Input("X", "float")], [], compute=abs), ValueError, "at least one output"),
    (lambda: Op("A", [Input("X", "T")], [Output("Y", "T")], types={"T": []}, compute=abs), ValueError, "allows no type"),
    (lambda: Op("A", [Input("X", "float")], [Output("X", "float")], compute=abs), ValueError, "must be unique"),
    (lambda: Op("A", [Input("X", "float", optional=True, variadic=True)], [Output("Y", "float")], compute=abs),
     ValueError, "both variadic and optional"),
    (lambda: Op("A", [Input("X", "float")], [Output("Y", "float")], attrs=[Attr("a", "complex", 0)], compute=abs),
     ValueError, "has kind 'complex'"),
    (lambda: Op("A", [Input("X", "float")], [Output("Y", "float")], attrs=[Attr("a", "int", 0), Attr("a", "int", 1)],
                compute=abs), ValueError, "attribute names must be unique"),
    (lambda: Op("A", [Input("X", "float")], [Output("Y", "float")], attrs=[Attr("a", "ints", default=(1, "x"))],
                compute=abs), ValueError, "default of attribute 'a' is invalid"),
    (lambda: Op("A", [Input("X", "float")], [Output("Y", "float")], since=0, compute=abs), ValueError, "since must be"),
    (lambda: Op("A", [Input("X", "float")], [Output("Y", "float")], native="inverse", compute=abs),
     ValueError, "exactly one of"),
    (lambda: Domain(""), ValueError, "non-empty name"),
    (lambda: Domain(None), ValueError, "non-empty name"),
    (lambda: Domain("ai.onnx"), ValueError, "ONNX's own domain"),
    (lambda: Domain("a").at("2"), ValueError, "domain version"),
    (lambda: ortcustom.register(None, Domain("a").add(Inverse)), TypeError, "onnxruntime.SessionOptions"),
    (lambda: ortcustom.session_options("org.a"), TypeError, "ortcustom.Domain objects"),
    (lambda: ortcustom.session_options(Domain("a").add(Inverse), Domain("b").add(Inverse), Domain("a").add(Double)),
     ValueError, "distinct names"),
    (lambda: direct_group_norm(np.ones((2, 4, 3)), 3), ValueError, "divide the 4 channels"),
    (lambda: direct_group_norm(np.ones((2, 4, 3)), 0), ValueError, "must be positive"),
    (lambda: direct_group_norm(np.ones(4), 1), ValueError, "expected \\(N, C, ...\\)"),
    (lambda: direct_group_norm(np.ones((2, 4, 3)), 2, epsilon=-1), ValueError, "epsilon=-1.0 is invalid: must be >= 0"),
    (lambda: direct_group_norm(np.ones((2, 4, 3)), 2, scale=np.ones(3)), ValueError, "scale has shape \\(3,\\)"),
    (lambda: direct_group_norm(np.ones((2, 4, 3)), 2, bias=np.ones((1, 4))), ValueError, "bias has shape"),
    (lambda: direct_group_norm(np.ones((2, 4, 3)), 2.5), TypeError, "num_groups"),  # silently truncated to 2
    (lambda: direct_group_norm(np.ones((2, 4, 3)), True), TypeError, "num_groups"),  # taken as 1
    (lambda: direct_group_norm(np.ones((2, 4, 3)), "2"), TypeError, None),
    (lambda: direct_group_norm(np.ones((2, 4, 3), np.int64), 2), TypeError, "accepts float32"),
])
def test_python_api_rejects_bad_arguments(make, exc, match):
    with pytest.raises(exc, match=match):
        make()


def test_direct_group_norm_on_nan_and_empty_inputs():
    x = np.ones((2, 4, 3))
    x[1, 0, 0] = np.nan
    y = direct_group_norm(x, 2)
    assert np.isnan(y[1, :2]).all() and (y[0] == 0).all() and (y[1, 2:] == 0).all()
    assert direct_group_norm(np.ones((0, 4, 3)), 2).shape == (0, 4, 3)
    assert direct_group_norm(np.ones((2, 0, 3)), 1).shape == (2, 0, 3)


_DIRECT_INVERSE = r"""
import numpy as np, re
from ortcustom.kernels import inverse
def raises(exc, match, f):
    try:
        f()
    except exc as e:
        assert re.search(match, str(e)), (match, str(e))
    else:
        raise AssertionError(f"no {exc.__name__} ({match})")
np.testing.assert_allclose(inverse(2 * np.eye(3)), np.eye(3) / 2)
y = inverse(np.stack([2 * np.eye(3), np.full((3, 3), np.nan)]))
np.testing.assert_allclose(y[0], np.eye(3) / 2)
assert np.isnan(y[1]).all()
assert inverse(np.ones((0, 3, 3))).shape == (0, 3, 3)
raises(TypeError, "accepts float32, float64, float16", lambda: inverse(np.eye(2, dtype=np.int32)))
raises(ValueError, r"expected \(\.\.\., N, N\)", lambda: inverse(np.ones((2, 3))))
raises(ValueError, r"expected \(\.\.\., N, N\)", lambda: inverse(np.ones(3)))
raises(ValueError, "out must be", lambda: inverse(np.eye(2), out=np.empty((3, 3))))
raises(ValueError, "out must be", lambda: inverse(np.eye(2), out=np.empty((2, 2), np.float32)))
raises(ValueError, "out must be", lambda: inverse(np.eye(2), out=np.empty((2, 2)).T))  # not C-contiguous
print("ok")
"""


def test_direct_inverse_api_checks_arguments_and_never_crashes():
    # in a subprocess: a crash here must fail this test, not end the test run
    r = run_python(_DIRECT_INVERSE)
    assert r.returncode == 0 and r.stdout.strip() == "ok", (
        f"ortcustom.kernels.inverse: exit status {r.returncode}\n{r.stderr[-2000:]}")
