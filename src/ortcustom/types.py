"""The two tables every layer derives from: element types and attribute kinds.

Each row says, once, what the declarations, the glue (kernel.h's enums: tests/test_type_tables.py
checks them against these rows), NumPy, torch, ONNX and the exporters call the same thing. Imports
with NumPy alone (a package's build reads the declarations before anything is compiled)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ElementType:
    """One tensor element type. `name` is ONNX's (what declarations and messages say); `aliases`
    are other names a declaration may use (NumPy's)."""

    name: str
    onnx: int                 # TensorProto.DataType, = kernel.h's oc_dtype value
    c_enum: str               # kernel.h's enumerator
    c_type: str               # what a C++ kernel reads (kernel.hpp's OC_ELEMENT_TYPES; half, bfloat16: half.h's)
    numpy: np.dtype | None    # None: NumPy has no such dtype (bfloat16, the float8 types)
    torch: str | None         # the torch dtype's attribute name (torch is not imported here)
    aliases: tuple[str, ...] = ()

    @property
    def size(self) -> int:
        """Bytes per element in a kernel's buffer (a string: its oc_string, pointer and size; the
        4-bit types: 1, the byte that holds two: see nbytes)."""
        if self.numpy is not None:
            return self.numpy.itemsize
        return {"string": 16, "bfloat16": 2}.get(self.name, 1)  # the float8 types: 1

    def nbytes(self, n: int) -> int:
        """Bytes of a tensor of n elements (kernel.hpp's tensor_bytes): the 4-bit types, two per byte."""
        return (n + 1) // 2 if self.name in ("int4", "uint4") else n * self.size

    def __str__(self) -> str:
        return self.name  # how messages print a type, on every path (kernel.hpp's dtype_name too)


def _e(name, onnx, c_type, numpy, torch, *aliases):
    return ElementType(name, onnx, "OC_" + name.upper(), c_type, None if numpy is None else np.dtype(numpy),
                       torch, aliases)


ELEMENT_TYPES: dict[str, ElementType] = {t.name: t for t in (
    _e("float", 1, "float", np.float32, "float32", "float32"),
    _e("uint8", 2, "uint8_t", np.uint8, "uint8"),
    _e("int8", 3, "int8_t", np.int8, "int8"),
    _e("uint16", 4, "uint16_t", np.uint16, "uint16"),
    _e("int16", 5, "int16_t", np.int16, "int16"),
    _e("int32", 6, "int32_t", np.int32, "int32"),
    _e("int64", 7, "int64_t", np.int64, "int64"),
    # UTF-8 text; NumPy: object arrays of str (what onnxruntime returns), str_ ("<U") and bytes_ arrays
    # are taken as inputs too; torch has no strings
    _e("string", 8, "oc_string", object, None),
    _e("bool", 9, "bool", np.bool_, "bool"),
    _e("float16", 10, "half", np.float16, "float16", "half"),
    _e("double", 11, "double", np.float64, "float64", "float64"),
    _e("uint32", 12, "uint32_t", np.uint32, "uint32"),
    _e("uint64", 13, "uint64_t", np.uint64, "uint64"),
    _e("bfloat16", 16, "bfloat16", None, "bfloat16"),
    # 8-bit floats (ONNX 1.14, ORT 1.16): their bits to a kernel; no NumPy type (Python kernels take none)
    _e("float8e4m3fn", 17, "float8e4m3fn", None, "float8_e4m3fn"),
    _e("float8e4m3fnuz", 18, "float8e4m3fnuz", None, "float8_e4m3fnuz"),
    _e("float8e5m2", 19, "float8e5m2", None, "float8_e5m2"),
    _e("float8e5m2fnuz", 20, "float8e5m2fnuz", None, "float8_e5m2fnuz"),
    # 4-bit integers (ONNX 1.16; in custom ops ORT >= 1.20): two per byte, element 2k in byte k's low
    # nibble, so n elements take ceil(n/2) bytes (`nbytes`); a kernel reads the bytes (kernel.hpp's
    # int4x2). No NumPy type (ml_dtypes' int4 takes a byte each), and torch's int4/uint4 run no ops
    _e("uint4", 21, "uint4x2", None, None),
    _e("int4", 22, "int4x2", None, None),
)}
_BY_NAME = {alias: t for t in ELEMENT_TYPES.values() for alias in (t.name, *t.aliases)}
_BY_ENUM = {t.onnx: t for t in ELEMENT_TYPES.values()}
_BY_DTYPE = {t.numpy: t for t in ELEMENT_TYPES.values() if t.numpy is not None}
TYPE_NAMES = tuple(sorted(_BY_NAME))  # every name a declaration may use


def element_type(name: str) -> ElementType | None:
    """The element type an ONNX or NumPy name ("float", "float32") names; None for no type."""
    return _BY_NAME.get(name) if isinstance(name, str) else None


def canonical(name: str) -> str:
    """ONNX's name of the type `name` names ("float32" -> "float"); `name` itself if none."""
    t = element_type(name)
    return t.name if t is not None else name


def onnx_enum(name: str) -> int:
    return _BY_NAME[name].onnx


def name_of_enum(enum: int) -> str:
    t = _BY_ENUM.get(enum)
    return t.name if t is not None else f"<ONNX type {enum}>"


def numpy_dtype(name: str) -> np.dtype | None:
    return _BY_NAME[name].numpy


def name_of_dtype(dtype) -> str:
    """The element type name of a NumPy dtype; ValueError for one ONNX Runtime has no tensor of."""
    dt = np.dtype(dtype)
    if dt.kind in "US":  # fixed-width text or bytes: a string tensor's elements
        return "string"
    try:
        return _BY_DTYPE[dt].name
    except KeyError:
        raise ValueError(f"no ONNX element type for NumPy dtype {dt}") from None


@dataclass(frozen=True)
class AttrKind:
    """One attribute kind: what a declaration says (`name`) and what each layer calls it."""

    name: str
    code: int            # kernel.h's oc_attr_kind value
    c_enum: str          # kernel.h's enumerator
    onnx: int            # onnx.AttributeProto.AttributeType
    python: type         # a value's Python type (an element's, for the list kinds)
    torch: str           # torch.library schema type
    suffix: str          # TorchScript g.op keyword suffix (name_f=...)
    descriptor: str      # TorchScript symbolic_helper._get_const descriptor
    is_list: bool = False

    @property
    def element(self) -> "AttrKind":
        """The kind of one element of a list kind ("ints" -> "int"); itself for a scalar kind."""
        return ATTR_KINDS[self.name[:-1]] if self.is_list else self

    def text(self, value) -> str:
        """How every message prints a value of this kind. A float: C's "%.9g" (a float32 round-trips),
        with ".0" added to an integral one ("-1.0"); the glue prints with the same rule (glue/attrs.cpp)."""
        if self.is_list:
            return "[" + ", ".join(self.element.text(v) for v in value) + "]"
        if self.name == "tensor":
            return f"<tensor {name_of_dtype(value.dtype)} {tuple(value.shape)}>"
        if self.name == "float":
            s = f"{value:.9g}"
            return s if any(c in s for c in ".eni") else s + ".0"
        return repr(value) if self.name == "string" else str(value)

    @property
    def bounded(self) -> bool:
        """Takes min/max (int and float): the glue checks these everywhere, plain library included."""
        return self.name in ("int", "float")


ATTR_KINDS: dict[str, AttrKind] = {k.name: k for k in (
    AttrKind("int", 1, "OC_ATTR_INT", 2, int, "int", "i", "i"),
    AttrKind("float", 2, "OC_ATTR_FLOAT", 1, float, "float", "f", "f"),
    AttrKind("string", 3, "OC_ATTR_STRING", 3, str, "str", "s", "s"),
    AttrKind("ints", 4, "OC_ATTR_INTS", 7, int, "int[]", "i", "is", True),
    AttrKind("floats", 5, "OC_ATTR_FLOATS", 6, float, "float[]", "f", "fs", True),
    AttrKind("strings", 6, "OC_ATTR_STRINGS", 8, str, "str[]", "s", "ss", True),
    # a tensor (NumPy array) of any element type; no default; torch ops take none
    AttrKind("tensor", 7, "OC_ATTR_TENSOR", 4, np.ndarray, "Tensor", "t", "t"),
)}
