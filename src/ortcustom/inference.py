"""Output types and shapes from an op's declaration: one rule for ORT's shape inference (at session
creation) and for the ONNX schema registered with `onnx` (checker, onnx.shape_inference)."""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as _np

from .errors import exception_text
from .registry import Op
from .types import onnx_enum


def infer_outputs(op: Op, in_types: Sequence[int | None], in_shapes: Sequence[tuple | None],
                  attrs: Callable[[], dict]) -> list[tuple[int | None, tuple | None]]:
    """For each declared output, (ONNX element type or None, shape or None). A heterogeneous
    variadic output's type is None: the model's outputs give each tensor's.

    `in_types`/`in_shapes` are per node input (None: absent or unknown); extra node inputs belong
    to a variadic last input. Shapes hold ints, str (symbols) or None (unknown dims). `attrs()`
    gives the node's attributes, with defaults, for shape rules that need them.
    """
    types, shapes = {}, {d.name: None for d in op.inputs}
    for i, (t, s) in enumerate(zip(in_types, in_shapes)):
        decl = op.inputs[min(i, len(op.inputs) - 1)]
        if i < len(op.inputs):
            shapes[decl.name] = s
        if t is not None:
            types.setdefault(decl.type, t)
    out, got_attrs = [], None
    for o in op.outputs:
        elem = types.get(o.type) if o.type in op.types else onnx_enum(o.type)
        if not o.homogeneous and o.type in op.types:
            elem = None  # each tensor's type is the node's: the model says it, no rule
        shape = None
        if isinstance(o.shape, str):
            shape = shapes.get(o.shape)
        elif callable(o.shape):
            if got_attrs is None:
                got_attrs = attrs()
            shape = rule_shape(op, o, shapes, got_attrs)
        out.append((elem, shape))
    return out


class ShapeRuleError(ValueError):
    """An output's shape rule (Output(shape=f)) raised, or returned something that is no shape;
    `detail`: the message without the op's name."""

    def __init__(self, op: Op, detail: str):
        super().__init__(f"{op.name}: {detail}")
        self.detail = detail


def rule_shape(op: Op, output, shapes: dict, attrs: dict) -> tuple | None:
    """What `output`'s rule says for these input shapes: None (unknown) or a tuple of dims (int >= 0,
    str: a symbol, None: unknown). ShapeRuleError naming the op and the output otherwise."""
    where = f"the shape rule of output {output.name}"
    try:
        got = output.shape(shapes, attrs)
    except Exception as e:
        raise ShapeRuleError(op, f"{where} raised {exception_text(e)}") from e
    if got is None:
        return None
    if isinstance(got, (str, bytes)) or not hasattr(got, "__iter__") or hasattr(got, "keys"):
        raise ShapeRuleError(op, f"{where} returned {_short(got)}, which is not a shape: {_SHAPE}")
    dims = tuple(got)
    for d in dims:
        if d is None or (isinstance(d, str) and d):
            continue
        if isinstance(d, bool) or not isinstance(d, (int, _np.integer)) or d < 0:
            raise ShapeRuleError(op, f"{where} returned {_short(got)}: dim {_short(d)} is not {_DIM}")
    return tuple(int(d) if d is not None and not isinstance(d, str) else d for d in dims)


_DIM = "an int >= 0, a dim name (a non-empty str) or None (unknown)"
_SHAPE = f"None (unknown) or a sequence of dims, each {_DIM}"


def _short(v) -> str:
    try:
        text = repr(v)
    except Exception as e:
        text = f"a {type(v).__name__} ({exception_text(e)})"
    return text if len(text) <= 80 else text[:77] + "..."
