"""The tables of element types and attribute kinds (ortcustom/types.py) are the one source: kernel.h's
enums, kernel.hpp's names and the glue's kind names match them; NumPy's type names are accepted
wherever a type is named; one wording of a refused attribute value on every path."""
import pathlib
import re

import numpy as np
import onnx
import pytest

import ortcustom
from ortcustom import Attr, Domain, Input, Op, Output, kernels
from ortcustom.registry import InvalidAttribute, checked
from ortcustom.types import ATTR_KINDS, ELEMENT_TYPES, canonical, numpy_dtype

from helpers import session

SRC = pathlib.Path(ortcustom.__file__).parent
HEADER = (SRC / "include" / "ortcustom" / "kernel.h").read_text()


def _enum(name):
    body = re.search(r"typedef enum %s \{(.*?)\}" % name, HEADER, re.S).group(1)
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"(OC_\w+)\s*=\s*(\d+)", body)}


def test_kernel_h_dtype_enum_is_the_element_type_table():
    enum = _enum("oc_dtype")
    enum.pop("OC_UNDEFINED")
    assert enum == {t.c_enum: t.onnx for t in ELEMENT_TYPES.values()}
    assert all(t.onnx == getattr(onnx.TensorProto, t.name.upper()) for t in ELEMENT_TYPES.values())


def test_kernel_hpp_prints_each_type_by_its_table_name():
    hpp = (SRC / "include" / "ortcustom" / "kernel.hpp").read_text()
    names = dict(re.findall(r'case (OC_\w+): return "(\w+)";', hpp[hpp.index("dtype_name"):]))
    assert names == {t.c_enum: t.name for t in ELEMENT_TYPES.values()}


def test_kernel_h_attr_kind_enum_and_glue_names_are_the_kind_table():
    assert _enum("oc_attr_kind") == {k.c_enum: k.code for k in ATTR_KINDS.values()}
    attrs_cpp = pathlib.Path(__file__).parent.parent / "src" / "ortcustom" / "glue" / "attrs.cpp"
    glue = dict(re.findall(r'case (OC_ATTR_\w+): return "(\w+)";', attrs_cpp.read_text()))
    assert glue == {k.c_enum: k.name for k in ATTR_KINDS.values()}
    assert all(k.onnx == getattr(onnx.AttributeProto, k.name.upper()) for k in ATTR_KINDS.values())


def test_numpy_sizes_and_torch_dtypes_agree_with_the_table():
    torch = pytest.importorskip("torch")
    for t in ELEMENT_TYPES.values():
        td = getattr(torch, t.torch)
        assert td.itemsize == t.size, t.name
        if t.numpy is not None:
            assert torch.from_numpy(np.zeros(1, t.numpy)).dtype == td, t.name


@pytest.mark.parametrize("numpy_name, onnx_name", [("float32", "float"), ("float64", "double"), ("half", "float16")])
def test_numpy_type_names_are_accepted_and_kept_as_onnx_names(numpy_name, onnx_name):
    assert canonical(numpy_name) == onnx_name and numpy_dtype(numpy_name) == numpy_dtype(onnx_name)
    op = Op("Twice", inputs=[Input("X", "T"), Input("K", numpy_name)], outputs=[Output("Y", numpy_name, shape="X")],
            types={"T": [numpy_name, "int64"]}, compute=lambda X, K: (X * 2).astype(numpy_dtype(onnx_name)))
    assert op.types == {"T": (onnx_name, "int64")}
    assert op.inputs[1].type == onnx_name and op.outputs[0].type == onnx_name
    x = np.ones(3, numpy_dtype(onnx_name))
    (y,) = session(op, Domain("test.npnames").add(op), {"X": x, "K": x}).run(None, {"X": x, "K": x})
    np.testing.assert_array_equal(y, 2 * x)


def test_an_unknown_type_name_lists_both_spellings():
    with pytest.raises(ValueError, match=r"unknown element type 'float33'; known: .*double.*float32.*float64"):
        Op("Bad", [Input("X", "T")], [Output("Y", "T")], types={"T": ["float33"]}, compute=abs)


GN = ortcustom.ops.GroupNorm


@pytest.mark.parametrize("eps, text", [(-1.0, "-1.0"), (-1e-5, "-9.99999975e-06"), (-0.1, "-0.100000001"),
                                       (-3e38, "-3.00000001e+38"), (float("nan"), "nan"), (-2, "-2.0")])
def test_a_refused_value_is_worded_alike_by_the_glue_and_by_python(eps, text):
    words = f"attribute epsilon={text} is invalid: must be >= 0"
    with pytest.raises(InvalidAttribute, match=f"^{re.escape(words)}$"):  # Python: direct call, torch op, export
        checked(next(a for a in GN.attrs if a.name == "epsilon"), eps)
    with pytest.raises(ValueError, match=f"^GroupNorm: {re.escape(words)}$"):
        kernels.group_norm(np.ones((2, 4, 3), np.float32), 2, epsilon=eps)
    d = Domain("ortcustom").add(GN)
    x = (np.float32, [2, 4, 3])
    with pytest.raises(Exception, match=re.escape(f"GroupNorm (node 'n0'): {words}")):  # the glue
        session(GN, d, {"X": x, "num_groups": (np.int64, []), "scale": (np.float32, [4]), "bias": (np.float32, [4])},
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
