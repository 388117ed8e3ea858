"""Declarations refuse, when made, what would fail later or silently: names that C or ONNX cannot
carry (empty, a NUL byte: C would cut the name there; a lone surrogate: no UTF-8 for it), an empty
`choices`, and attribute bounds that the glue cannot compare exactly as int64."""
import re

import pytest

from ortcustom import Attr, Domain, Input, Op, Output


def op(**kw):
    decl = dict(inputs=[Input("X", "float")], outputs=[Output("Y", "float")], compute=lambda X: X)
    decl.update(kw)
    return Op("Probe", **decl)


NAMES = [("", "needs a non-empty name"), ("a\0b", "holds a NUL character"),
         ("a\ud800", "is not text UTF-8 can encode (a lone surrogate)")]


@pytest.mark.parametrize("name, why", NAMES, ids=["empty", "nul", "surrogate"])
@pytest.mark.parametrize("make, what", [
    (lambda n: Input(n, "float"), "input"),
    (lambda n: Output(n, "float"), "output"),
    (lambda n: Attr(n, "int", default=0), "attribute"),
    (lambda n: Domain(n), "domain"),
], ids=["input", "output", "attr", "domain"])
def test_names_refused_when_declared(make, what, name, why):
    with pytest.raises(ValueError, match=f"{what} .*{re.escape(why)}"):
        make(name)


@pytest.mark.parametrize("name, why", NAMES + [(None, "needs a non-empty name")], ids=["empty", "nul", "surrogate", "none"])
def test_op_names_refused_when_declared(name, why):
    with pytest.raises(ValueError, match=f"op .*{re.escape(why)}"):
        Op(name, [Input("X", "float")], [Output("Y", "float")], compute=lambda X: X)


@pytest.mark.parametrize("name, why", NAMES, ids=["empty", "nul", "surrogate"])
def test_type_constraint_names(name, why):
    with pytest.raises(ValueError, match=f"op 'Probe': .*type constraint.*{re.escape(why)}"):
        op(inputs=[Input("X", name or "float")], outputs=[Output("Y", "float")], types={name: ("float",)})


def test_unicode_names_that_encode_are_fine():
    d = Domain("dömäin.ünicode").add(op(inputs=[Input("Xé", "float")], outputs=[Output("Yé", "float")],
                                         compute=lambda a: a, attrs=[Attr("αlpha", "float", default=1.0)]))
    assert d.ops[0].attrs[0].name == "αlpha"


def test_empty_choices_refused():
    with pytest.raises(ValueError, match=r"attribute 'mode': choices=\(\) allows no value"):
        Attr("mode", "int", default=0, choices=())
    assert Attr("mode", "int", default=0, choices=[0, 1]).choices == (0, 1)  # kept as a tuple


@pytest.mark.parametrize("kw, why", [
    (dict(max=2**63), "max 9223372036854775808 is outside int64"),
    (dict(min=-2**63 - 1), "min -9223372036854775809 is outside int64"),
    (dict(choices=(0, 2**64)), "choice 18446744073709551616 is outside int64"),
    (dict(min=0.5), "min 0.5 is not an integer"),
    (dict(max=float("inf")), "max inf is not an integer"),
    (dict(choices=(0, 1.5)), "choice 1.5 is not an integer"),
    (dict(choices=(True,)), "choice True is not an integer"),
    (dict(min=True), "min must be a number, got True"),
    (dict(min="1"), "min must be a number, got '1'"),
    (dict(min=5, max=3), "min 5 > max 3 allows no value"),
])
def test_int_bounds_refused_when_declared(kw, why):
    with pytest.raises(ValueError, match=f"attribute 'k': {why}"):
        Attr("k", "int", default=0, **kw)


def test_int_bounds_are_ints():
    a = Attr("k", "int", default=0, min=-2**63, max=2.0**53)
    assert (a.min, a.max) == (-2**63, 2**53) and type(a.max) is int
    a.validate(2**53)
    with pytest.raises(ValueError, match="must be <= 9007199254740992$"):  # exactly, as the glue words it
        a.validate(2**53 + 1)


def test_float_bounds():
    a = Attr("f", "float", default=0.0, min=0, max=10**8)
    assert (a.min, a.max) == (0.0, 1e8)
    with pytest.raises(ValueError, match=r"must be <= 1e\+08$"):  # as the glue's %g
        a.validate(2e8)
    with pytest.raises(ValueError, match="attribute 'f': min must be a number, got nan"):
        Attr("f", "float", default=0.0, min=float("nan"))
    Attr("f", "float", default=0.0, min=float("-inf"))  # no bound, said so


def test_a_name_with_nul_no_longer_reaches_a_session():
    """It used to make the kernel silently get the default (C read the name up to the NUL)."""
    with pytest.raises(ValueError, match="NUL"):
        op(attrs=[Attr("alpha\0beta", "float", default=1.0)])


def test_texts_that_reach_c_or_onnx_must_encode():
    with pytest.raises(ValueError, match=r"op 'Probe': doc '\\ud800' is not text UTF-8 can encode"):
        op(doc="\ud800")
    with pytest.raises(ValueError, match=r"attribute 's': doc '\\ud800' is not text UTF-8 can encode"):
        Attr("s", "string", default="", doc="\ud800")
    with pytest.raises(ValueError, match=r"attribute 's': default 'a\\ud800' is not text UTF-8 can encode"):
        Attr("s", "string", default="a\ud800")
