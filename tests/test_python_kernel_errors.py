"""Python kernels and domains where a mistake used to pass in silence: a kernel that rebinds `out`
(ORT's outputs stayed uninitialised, no error), an exception whose message cannot be made (reported
as "the kernel returned without allocating output Y"), and an op added to a domain after it was
registered (silently absent from those SessionOptions)."""
import numpy as np
import onnxruntime as ort
import pytest

import ortcustom
from ortcustom import Attr, Domain, Input, Op, Output
from ortcustom.testing import make_model
from helpers import CPU

X = np.arange(6, dtype=np.float32).reshape(2, 3)


def run(compute, attrs=(), node_attrs=None):
    op = Op("PyK", [Input("X", "float")], [Output("Y", "float", shape="X")], compute=compute, attrs=list(attrs))
    d = Domain("pyk.errors").add(op)
    sess = ort.InferenceSession(make_model(op, d, {"X": X}, attrs=node_attrs).SerializeToString(),
                                ortcustom.session_options(d), providers=CPU)
    return sess.run(None, {"X": X})[0]


# ---- out= ---------------------------------------------------------------------------------------

def rebinds(X, *, out):
    out = (X * 2,)  # noqa: F841  the mistake: ORT's buffer is never written


def rebinds_one(X, *, out):
    out = out[0]  # writes into the buffer, but looks the same as the mistake: it must return
    out[...] = X * 2


def rebinds_and_returns(X, *, out):
    out = (X * 2,)
    return out


def writes(X, *, out):
    (y,) = out
    y[...] = X * 2


def closure_rebinds(X, *, out):
    def later():
        return out
    out = (X * 2,)  # noqa: F841  (a cell variable: STORE_DEREF)
    later()


@pytest.mark.parametrize("kernel", [rebinds, rebinds_one, closure_rebinds])
def test_a_kernel_that_rebinds_out_and_returns_none_is_an_error(kernel):
    with pytest.raises(Exception) as e:
        run(kernel)
    assert ("PyK (node 'n0'): the Python kernel assigns to its parameter `out` and returned None: what it computed "
            "never reached ORT's outputs") in str(e.value)


@pytest.mark.parametrize("kernel", [rebinds_and_returns, writes])
def test_a_kernel_given_out_that_writes_or_returns_its_outputs_works(kernel):
    np.testing.assert_array_equal(run(kernel), X * 2)


# ---- an exception whose message cannot be made ---------------------------------------------------

class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("no words")


class UnprintableValue(ValueError):
    def __str__(self):
        raise RuntimeError("no words")


def raises_unprintable(X):
    raise Unprintable()


def test_a_kernel_exception_without_a_message_is_still_reported():
    with pytest.raises(Exception) as e:
        run(raises_unprintable)
    text = str(e.value)
    assert ("PyK (node 'n0'): the Python kernel raised Unprintable (its message could not be made: its __str__ "
            "raised RuntimeError)") in text
    assert "raises_unprintable" in text  # its last frames, as for any exception
    assert "without allocating" not in text


def test_an_attribute_check_exception_without_a_message_is_still_reported():
    def check(v):
        raise UnprintableValue()

    with pytest.raises(Exception) as e:
        run(lambda X, k: X, attrs=[Attr("k", "int", default=0, check=lambda v: None if v == 0 else check(v))],
            node_attrs={"k": 1})
    assert ("PyK (node 'n0'): attribute k=1 is invalid: UnprintableValue (its message could not be made: "
            "its __str__ raised RuntimeError)") in str(e.value)


# ---- a domain once registered --------------------------------------------------------------------

def test_adding_to_a_registered_domain_is_refused():
    a = Op("A", [Input("X", "float")], [Output("Y", "float")], compute=lambda X: X)
    b = Op("B", [Input("X", "float")], [Output("Y", "float")], compute=lambda X: X)
    d = Domain("pyk.frozen").add(a)
    d.add(Op("C", [Input("X", "float")], [Output("Y", "float")], compute=lambda X: X))  # not registered yet
    ortcustom.session_options(d)
    with pytest.raises(ValueError, match=r"domain 'pyk.frozen' was registered already: the SessionOptions it went "
                                         r"into hold the ops it had then, and 'B' would not reach them"):
        d.add(b)
    assert [op.name for op in d.ops] == ["A", "C"]
    Domain("pyk.frozen").add(a, b)  # a new domain of that name takes them
    d.at(1)  # the registered domain still serves what reads it
