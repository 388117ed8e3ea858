"""ONNX schemas for our ops, registered with `onnx` itself, so that onnx.checker (full_check) and
onnx.shape_inference accept and type models that use them:

    ortcustom.schemas.register(domain)

onnx's schema registry is process-wide, so this is asked for, never a side effect of a declaration:
`ortcustom.testing.make_model` and `ortcustom.export.export` do it for the domains they write."""
from __future__ import annotations

import threading

import onnx
import onnx.reference  # noqa: F401  before ours are registered: its import indexes every schema by
#                        name and refuses one name in two domains (ours may be: Offset in two)
from onnx import defs, helper

from .inference import infer_outputs
from .registry import Domain, Op, normalize, text_of
from .signatures import accepted, pick, siblings
from .types import ATTR_KINDS, name_of_enum

_lock = threading.Lock()
_registered: dict[tuple[str, str, int], tuple[Op, ...]] = {}  # (domain, name, since) -> the op (or siblings)



def _param(io, op: Op) -> defs.OpSchema.FormalParameter:
    P = defs.OpSchema.FormalParameterOption
    option = P.Variadic if io.variadic else (P.Optional if io.optional else P.Single)
    type_str = io.type if io.type in op.types else f"tensor({io.type})"
    return defs.OpSchema.FormalParameter(io.name, type_str, param_option=option,
                                         is_homogeneous=io.homogeneous, min_arity=io.min_arity)


def _attribute(a) -> defs.OpSchema.Attribute:
    kind = ATTR_KINDS[a.kind]
    if a.required:
        return defs.OpSchema.Attribute(a.name, defs.OpSchema.AttrType(kind.onnx), a.doc, required=True)
    value = normalize(a, a.default)
    default = list(value) if kind.is_list else value
    return defs.OpSchema.Attribute(a.name, helper.make_attribute(a.name, default, attr_type=kind.onnx), a.doc)


def _infer(ops: tuple[Op, ...]):
    def infer(ctx) -> None:
        types, shapes = [], []
        for i in range(ctx.get_num_inputs()):
            tp = ctx.get_input_type(i) if ctx.has_input(i) else None
            if tp is None or not tp.HasField("tensor_type"):
                types.append(None)
                shapes.append(None)
                continue
            tt = tp.tensor_type
            types.append(tt.elem_type or None)
            shapes.append(tuple(d.dim_value if d.HasField("dim_value") else (d.dim_param or None)
                                for d in tt.shape.dim) if tt.HasField("shape") else None)
        op = ops[0]
        if len(ops) > 1:  # siblings: the declaration the node's input types pick
            op = pick(ops, [None if t is None else name_of_enum(t) for t in types])
            if op is None:
                got = ", ".join("?" if t is None else name_of_enum(t) for t in types)
                raise ValueError(f"{ops[0].name}: no declaration takes input types ({got}); it accepts "
                                 f"{accepted(ops)}")

        def attrs():
            out = {}
            for a in op.attrs:
                got = ctx.get_attribute(a.name)
                value = helper.get_attribute_value(got) if got is not None else (
                    None if a.required else normalize(a, a.default))
                if a.kind == "string" and isinstance(value, bytes) and not a.bytes:
                    value = text_of(value)  # as a kernel gets it: text, or bytes when it asks
                if a.kind == "strings" and got is not None:
                    value = tuple(v if a.bytes else text_of(v) for v in value)
                out[a.name] = value
            return out

        for i, (elem, shape) in enumerate(infer_outputs(op, types, shapes, attrs)):
            if i >= ctx.get_num_outputs() or elem is None or op.outputs[i].variadic:
                continue
            ctx.set_output_type(i, helper.make_tensor_type_proto(
                elem, None if shape is None else [d if d is not None else "" for d in shape]))
    return infer


def _types(ops: tuple[Op, ...], position: str, j: int) -> list[str]:
    """The element types siblings take at input or output j, in first-seen order."""
    out = {}
    for op in ops:
        io = getattr(op, position)[j]
        out.update(dict.fromkeys(op.types.get(io.type, (io.type,))))
    return list(out)


def schema(op: Op | tuple[Op, ...], domain: str) -> defs.OpSchema:
    """The ONNX OpSchema of `op` in `domain` (or of siblings: one schema for the name, each input
    and output taking any type a sibling takes there; inference picks the node's sibling)."""
    ops = op if isinstance(op, tuple) else (op,)
    op = ops[0]
    if len(ops) == 1:
        params = {"inputs": [_param(i, op) for i in op.inputs], "outputs": [_param(o, op) for o in op.outputs],
                  "type_constraints": [(c, [f"tensor({t})" for t in allowed], "") for c, allowed in op.types.items()]}
    else:
        P = defs.OpSchema.FormalParameterOption
        params = {"inputs": [], "outputs": [], "type_constraints": []}
        for position in ("inputs", "outputs"):
            for j, io in enumerate(getattr(op, position)):
                name = f"T_{position[0]}{j}"  # one constraint per place: siblings bind theirs differently
                option = P.Variadic if io.variadic else (P.Optional if io.optional else P.Single)
                params[position].append(defs.OpSchema.FormalParameter(
                    io.name, name, param_option=option, is_homogeneous=io.homogeneous, min_arity=io.min_arity))
                params["type_constraints"].append((name, [f"tensor({t})" for t in _types(ops, position, j)], ""))
    s = defs.OpSchema(op.name, domain, op.since, op.doc, **params, attributes=[_attribute(a) for a in op.attrs])
    s.set_type_and_shape_inference_function(_infer(ops))
    return s


def register(*domains: Domain) -> None:
    """Registers (or replaces) with onnx the schema of every op of `domains`."""
    for d in domains:
        if not isinstance(d, Domain):
            raise TypeError(f"schemas.register takes ortcustom.Domain objects, got {d!r}")
        for op in d.ops:
            if siblings(d.ops, op)[0] is op:
                register_op(siblings(d.ops, op), d.name)


def register_op(op: Op | tuple[Op, ...], domain: str) -> None:
    """Registers (or replaces) the schema of `op` (or of siblings, a tuple) in the domain named
    `domain` with onnx."""
    ops = op if isinstance(op, tuple) else (op,)
    key = (domain, ops[0].name, ops[0].since)
    with _lock:
        had = _registered.get(key)
        if had is not None and len(had) == len(ops) and all(a is b for a, b in zip(had, ops)):
            return
        if key in _registered or _exists(*key):
            defs.deregister_schema(ops[0].name, ops[0].since, domain)
        defs.register_schema(schema(ops, domain))
        _registered[key] = ops


def _exists(domain: str, name: str, since: int) -> bool:
    try:
        return defs.get_schema(name, since, domain).since_version == since
    except defs.SchemaError:
        return False


