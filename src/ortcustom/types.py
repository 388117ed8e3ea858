"""Element types: the names used in op declarations, their ONNX enum values and NumPy dtypes."""
from __future__ import annotations

import numpy as np

# name -> (ONNX TensorProto enum value, NumPy dtype). bfloat16 has no NumPy dtype (None).
ELEMENT_TYPES: dict[str, tuple[int, np.dtype | None]] = {
    "float": (1, np.dtype(np.float32)),
    "uint8": (2, np.dtype(np.uint8)),
    "int8": (3, np.dtype(np.int8)),
    "uint16": (4, np.dtype(np.uint16)),
    "int16": (5, np.dtype(np.int16)),
    "int32": (6, np.dtype(np.int32)),
    "int64": (7, np.dtype(np.int64)),
    "bool": (9, np.dtype(np.bool_)),
    "float16": (10, np.dtype(np.float16)),
    "double": (11, np.dtype(np.float64)),
    "uint32": (12, np.dtype(np.uint32)),
    "uint64": (13, np.dtype(np.uint64)),
    "bfloat16": (16, None),
}
_BY_ENUM = {enum: name for name, (enum, _) in ELEMENT_TYPES.items()}
_BY_DTYPE = {dt: name for name, (_, dt) in ELEMENT_TYPES.items() if dt is not None}


def onnx_enum(name: str) -> int:
    return ELEMENT_TYPES[name][0]


def name_of_enum(enum: int) -> str:
    return _BY_ENUM.get(enum, f"<ONNX type {enum}>")


def numpy_dtype(name: str) -> np.dtype | None:
    return ELEMENT_TYPES[name][1]


def name_of_dtype(dtype) -> str:
    """The element type name of a NumPy dtype; ValueError for one ONNX Runtime has no tensor of."""
    dt = np.dtype(dtype)
    try:
        return _BY_DTYPE[dt]
    except KeyError:
        raise ValueError(f"no ONNX element type for NumPy dtype {dt}") from None
