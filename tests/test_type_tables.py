"""The tables of element types and attribute kinds (ortcustom/types.py) are the one source: kernel.h's
enums, kernel.hpp's names and the glue's kind names match them; NumPy's type names are accepted
wherever a type is named."""
import pathlib
import re

import numpy as np
import onnx
import pytest

import ortcustom
from ortcustom import Domain, Input, Op, Output
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


def test_kernel_hpp_types_and_names_are_the_table():
    hpp = (SRC / "include" / "ortcustom" / "kernel.hpp").read_text()
    rows = re.findall(r'X\((\w+), (OC_\w+), "(\w+)"\)', hpp)
    assert {enum: (ctype, name) for ctype, enum, name in rows} == {
        t.c_enum: (t.c_type, t.name) for t in ELEMENT_TYPES.values()}


def test_kernel_h_attr_kind_enum_and_glue_names_are_the_kind_table():
    assert _enum("oc_attr_kind") == {k.c_enum: k.code for k in ATTR_KINDS.values()}
    attrs_cpp = pathlib.Path(__file__).parent.parent / "src" / "ortcustom" / "glue" / "attrs.cpp"
    glue = dict(re.findall(r'case (OC_ATTR_\w+): return "(\w+)";', attrs_cpp.read_text()))
    assert glue == {k.c_enum: k.name for k in ATTR_KINDS.values()}
    assert all(k.onnx == getattr(onnx.AttributeProto, k.name.upper()) for k in ATTR_KINDS.values())


def test_numpy_sizes_and_torch_dtypes_agree_with_the_table():
    torch = pytest.importorskip("torch")
    # torch has no strings, and its int4/uint4 run no ops (a byte each, not ONNX's packing)
    assert [t.name for t in ELEMENT_TYPES.values() if t.torch is None] == ["string", "uint4", "int4"]
    for t in ELEMENT_TYPES.values():
        if t.torch is None:
            continue
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
