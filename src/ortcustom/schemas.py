"""ONNX schemas for our ops, registered with `onnx` itself, so that onnx.checker (full_check) and
onnx.shape_inference accept and type models that use them. Done by Domain.add."""
from __future__ import annotations

import threading

import onnx
import onnx.reference  # noqa: F401  before ours are registered: its import indexes every schema by
#                        name and refuses one name in two domains (ours may be: Offset in two)
from onnx import defs, helper

from .inference import infer_outputs
from .registry import Op, normalize

_lock = threading.Lock()
_registered: dict[tuple[str, str, int], Op] = {}  # (domain, name, since) -> op

_ATTR_TYPES = {"int": defs.OpSchema.AttrType.INT, "float": defs.OpSchema.AttrType.FLOAT,
               "string": defs.OpSchema.AttrType.STRING, "ints": defs.OpSchema.AttrType.INTS,
               "floats": defs.OpSchema.AttrType.FLOATS}


def _param(io, op: Op) -> defs.OpSchema.FormalParameter:
    P = defs.OpSchema.FormalParameterOption
    option = P.Variadic if io.variadic else (P.Optional if io.optional else P.Single)
    type_str = io.type if io.type in op.types else f"tensor({io.type})"
    return defs.OpSchema.FormalParameter(io.name, type_str, param_option=option,
                                         is_homogeneous=io.homogeneous, min_arity=io.min_arity)


def _attribute(a) -> defs.OpSchema.Attribute:
    if a.required:
        return defs.OpSchema.Attribute(a.name, _ATTR_TYPES[a.kind], a.doc, required=True)
    value = normalize(a, a.default)
    default = list(value) if a.kind in ("ints", "floats") else value
    return defs.OpSchema.Attribute(a.name, helper.make_attribute(a.name, default, attr_type=_proto_attr(a.kind)), a.doc)


def _proto_attr(kind: str):
    A = onnx.AttributeProto
    return {"int": A.INT, "float": A.FLOAT, "string": A.STRING, "ints": A.INTS, "floats": A.FLOATS}[kind]


def _infer(op: Op):
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

        def attrs():
            out = {}
            for a in op.attrs:
                got = ctx.get_attribute(a.name)
                out[a.name] = helper.get_attribute_value(got) if got is not None else (
                    None if a.required else a.default)
            return out

        for i, (elem, shape) in enumerate(infer_outputs(op, types, shapes, attrs)):
            if i >= ctx.get_num_outputs() or elem is None or op.outputs[i].variadic:
                continue
            ctx.set_output_type(i, helper.make_tensor_type_proto(
                elem, None if shape is None else [d if d is not None else "" for d in shape]))
    return infer


def schema(op: Op, domain: str) -> defs.OpSchema:
    """The ONNX OpSchema of `op` in `domain`."""
    s = defs.OpSchema(
        op.name, domain, op.since, op.doc,
        inputs=[_param(i, op) for i in op.inputs],
        outputs=[_param(o, op) for o in op.outputs],
        type_constraints=[(c, [f"tensor({t})" for t in allowed], "") for c, allowed in op.types.items()],
        attributes=[_attribute(a) for a in op.attrs])
    s.set_type_and_shape_inference_function(_infer(op))
    return s


def register(op: Op, domain: str) -> None:
    """Registers (or replaces) the schema of `op` in `domain` with onnx."""
    key = (domain, op.name, op.since)
    with _lock:
        if _registered.get(key) is op:
            return
        if key in _registered or _exists(*key):
            defs.deregister_schema(op.name, op.since, domain)
        defs.register_schema(schema(op, domain))
        _registered[key] = op


def _exists(domain: str, name: str, since: int) -> bool:
    try:
        return defs.get_schema(name, since, domain).since_version == since
    except defs.SchemaError:
        return False


