"""Output types and shapes from an op's declaration: one rule for ORT's shape inference (at session
creation) and for the ONNX schema registered with `onnx` (checker, onnx.shape_inference)."""
from __future__ import annotations

from typing import Callable, Sequence

from .registry import Op
from .types import onnx_enum


def infer_outputs(op: Op, in_types: Sequence[int | None], in_shapes: Sequence[tuple | None],
                  attrs: Callable[[], dict]) -> list[tuple[int | None, tuple | None]]:
    """For each declared output, (ONNX element type or None, shape or None).

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
        shape = None
        if isinstance(o.shape, str):
            shape = shapes.get(o.shape)
        elif callable(o.shape):
            if got_attrs is None:
                got_attrs = attrs()
            shape = o.shape(shapes, got_attrs)
            shape = tuple(shape) if shape is not None else None
        out.append((elem, shape))
    return out
