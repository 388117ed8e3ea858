"""An op declaration lowered to the glue's table (ortcustom/op_def.h), as plain Python values.

The one builder of an oc_op_def: the Python module copies these values into C structs
(`_customop.OpDef`), `python -m ortcustom library-source` prints them as a plain library's C table,
and `python -m ortcustom kernel-header` prints a kernel's spec (names, kinds, signature rows) from
them. Nothing else derives a binding row, an io kind or an attribute default from a declaration.

Runs with NumPy alone (ortcustom's own build imports it from the source tree).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .registry import normalize
from .types import onnx_enum

INT32_MAX = 2**31 - 1  # oc_op_def.until of an op with no last version


@dataclass(frozen=True)
class IoDef:
    """oc_io_def: an input or output."""

    name: str
    kind: str          # oc_io_kind: "required", "optional" or "variadic"
    cpu: bool          # inputs: stays in host memory on a GPU provider
    min_arity: int
    homogeneous: bool
    shape_of: int      # outputs: the input whose shape it has, or -1
    constrained: bool  # its type is a type constraint's
    constant: bool     # inputs: an initializer, read at kernel creation


@dataclass(frozen=True)
class AttrDef:
    """oc_attr_def: an attribute, its default (normalized, as a node carries it) and bounds."""

    name: str
    kind: str              # "int", "float", "string", "ints", "floats"
    required: bool
    default: Any           # None when required
    min: float | int | None
    max: float | int | None
    choices: tuple[int, ...] | None


@dataclass(frozen=True)
class OpTable:
    """oc_op_def without its kernels: what the glue registers for one op."""

    name: str
    since: int
    until: int                              # INT32_MAX: open
    inputs: tuple[IoDef, ...]
    outputs: tuple[IoDef, ...]
    attrs: tuple[AttrDef, ...]
    types: tuple[dict[str, str], ...]       # per binding: {constraint: element type name}
    bindings: tuple[tuple[int, ...], ...]   # per binding: each input's, then each output's ONNX type
    accepted: str                           # the accepted types, for the error on any other
    host_shapes: bool                       # output shapes from Python rules
    host_checks: bool                       # attribute checks by Python functions (Attr.check)


def binding_row(op, binding: dict[str, str]) -> tuple[int, ...]:
    """The element types (ONNX numbers) of each input, then each output, under `binding`
    ({constraint: element type name}); a constraint it leaves out takes its first type."""
    def elem(io):
        if io.type not in op.types:
            return io.type
        return binding.get(io.type) or op.types[io.type][0]

    return tuple(onnx_enum(elem(io)) for io in tuple(op.inputs) + tuple(op.outputs))


def _io(op, io, inputs=None) -> IoDef:
    shape = getattr(io, "shape", None)
    return IoDef(io.name, "variadic" if io.variadic else "optional" if io.optional else "required",
                 bool(getattr(io, "cpu", False)), int(io.min_arity), bool(io.homogeneous),
                 [i.name for i in inputs].index(shape) if inputs is not None and isinstance(shape, str) else -1,
                 io.type in op.types, bool(getattr(io, "constant", False)))


def _attr(a) -> AttrDef:
    return AttrDef(a.name, a.kind, a.required, None if a.required else normalize(a, a.default), a.min, a.max,
                   None if a.choices is None else tuple(int(c) for c in a.choices))


def lower(op) -> OpTable:
    """`op` (an ortcustom.Op) as the glue's table."""
    types = tuple(op.type_bindings())
    return OpTable(
        name=op.name, since=op.since, until=INT32_MAX if op.until is None else op.until,
        inputs=tuple(_io(op, i) for i in op.inputs),
        outputs=tuple(_io(op, o, op.inputs) for o in op.outputs),
        attrs=tuple(_attr(a) for a in op.attrs),
        types=types, bindings=tuple(binding_row(op, b) for b in types),
        accepted=op.accepted_types(),
        host_shapes=any(callable(o.shape) for o in op.outputs),
        host_checks=any(a.check is not None for a in op.attrs))
