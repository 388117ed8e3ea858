"""TorchScript exporter (`torch.onnx.export(..., dynamo=False)`): symbolic functions from mappings.

    from ortcustom.export import symbolics
    with symbolics.registered(opset_version=17):          # aten::inverse, aten::linalg_inv, ortcustom::*
        torch.onnx.export(model, args, f, dynamo=False, opset_version=17,
                          custom_opsets=symbolics.custom_opsets())
"""
from __future__ import annotations

import contextlib
from typing import Callable, Iterable

import torch

from .mapping import OpMapping, resolve

from ..types import ATTR_KINDS, element_type


def _helper():
    from torch.onnx._internal.torchscript_exporter import symbolic_helper

    return symbolic_helper


def symbolic(mapping: OpMapping, overload=None) -> Callable:
    """The symbolic function `f(g, *args)` that emits `mapping`'s node for one of its torch ops.

    The TorchScript exporter calls one function for all the overloads of a name (they take the same
    arguments: OpMapping maps no others together): an argument that an overload takes as a scalar
    (aten::bucketize.Scalar's `self`), made a constant by the tracer, feeds its input as that
    overload says, a constant of the input's type."""
    overload = overload or mapping.overloads[0]
    bindings = mapping.bindings[overload]
    siblings = [mapping.bindings[o] for o in mapping.overloads if o._schema.name == overload._schema.name]
    scalar_types = [next((s[k].elem_type for s in siblings if s[k].elem_type), None) for k in range(len(bindings))]
    op = mapping.op
    qualified = f"{mapping.domain}::{mapping.name}"

    def fn(g, *args):
        h = _helper()
        inputs = [None] * len(op.inputs)
        attrs = {}
        for b, v, scalar_type in zip(bindings, args, scalar_types):
            if b.kind == "drop":
                continue
            if b.kind == "attr":
                if h._is_none(v):
                    continue  # not given: the op's default
                value = mapping.attribute(overload, b, h._get_const(v, ATTR_KINDS[b.attr_kind].descriptor, b.torch_name))
                attrs[f"{b.target}_{ATTR_KINDS[b.attr_kind].suffix}"] = value
            elif h._is_none(v):
                continue  # an absent optional input
            elif b.elem_type is not None or (scalar_type is not None and h._is_constant(v)):
                et = element_type(b.elem_type or scalar_type)  # a scalar feeding an input: a constant tensor
                desc = {"b": "b", "i": "i", "u": "i"}.get(et.numpy.kind if et.numpy is not None else "f", "f")
                value = h._maybe_get_const(v, desc)
                if h._is_value(value):
                    inputs[b.index] = g.op("Cast", v, to_i=et.onnx)
                else:
                    inputs[b.index] = g.op("Constant", value_t=torch.tensor(value, dtype=getattr(torch, et.torch)))
            else:
                inputs[b.index] = v
        while inputs and inputs[-1] is None:
            inputs.pop()
        missing = [op.inputs[i].name for i, v in enumerate(inputs) if v is None and not op.inputs[i].optional]
        if missing:
            raise ValueError(f"exporting {overload._schema.name} as {qualified}: no value for {missing}")
        node_inputs = [v if v is not None else h._optional_input_placeholder_tensor(g) for v in inputs]
        count = len(overload._schema.returns)  # the node's outputs: the torch op's results, in order
        outs = g.op(qualified, *node_inputs, outputs=count, **attrs)
        outs = (outs,) if count == 1 else tuple(outs)
        for i, out in enumerate(outs):
            out_type = _output_type(op, inputs, i)
            if out_type is not None:
                out.setType(out_type)
        return outs[0] if count == 1 else outs

    fn.__name__ = f"symbolic_{mapping.name}"
    fn.__qualname__ = fn.__name__
    return fn


def _output_type(op, inputs, index=0):
    """The TorchScript type of op's output `index`: the shape of its `shape=` input, the element
    type its declaration gives (a fixed type, or its constraint's binding from the inputs of that
    constraint, or the constraint's only type); a type left out (None, or no dtype) is inferred by
    ONNX/ORT from the op's schema, where a wrong one would make ORT refuse the model."""
    def _torch_dtype(name):
        return getattr(torch, element_type(name).torch, None)

    o = op.outputs[index]
    if o.type not in op.types:
        dtype = _torch_dtype(o.type)
    elif len(op.types[o.type]) == 1:
        dtype = _torch_dtype(op.types[o.type][0])
    else:
        known = (v.type().dtype() for i, v in zip(op.inputs, inputs)
                 if i.type == o.type and v is not None and isinstance(v.type(), torch._C.TensorType))
        dtype = next((d for d in known if d is not None), None)
    src = inputs[[i.name for i in op.inputs].index(o.shape)] if isinstance(o.shape, str) else None
    src_type = src.type() if src is not None and isinstance(src.type(), torch._C.TensorType) else None
    if dtype is None:  # the shape alone, if any
        sizes = src_type.varyingSizes() if src_type is not None else None
        return None if sizes is None else torch._C.TensorType.get().with_sizes(sizes)
    return (src_type or torch._C.TensorType.get()).with_dtype(dtype)


def symbolics(ops: Iterable | None = None) -> dict[str, Callable]:
    """{torch op name ("aten::inverse"): symbolic function} for the mappings `ops` (see export)."""
    out = {}
    for m in resolve(ops):
        for ov in m.overloads:  # one per name: the first overload's (see symbolic)
            out.setdefault(ov._schema.name, symbolic(m, ov))
    return out


def custom_opsets(ops: Iterable | None = None) -> dict[str, int]:
    """{domain: version} for `torch.onnx.export(custom_opsets=...)`."""
    return {m.domain: m.version for m in resolve(ops)}


def _registry():
    try:
        from torch.onnx._internal.torchscript_exporter import registration

        return registration.registry
    except Exception:  # pragma: no cover - private API moved
        return None


def _group(name: str):
    reg = _registry()
    return reg.get_function_group(name) if reg is not None else None


def register(ops: Iterable | None = None, opset_version: int | None = None) -> dict[str, Callable]:
    """Registers the symbolics (torch.onnx.register_custom_op_symbolic) for `opset_version`
    (default: the TorchScript exporter's default opset) and leaves them registered. Returns them."""
    version = opset_version or default_opset()
    table = symbolics(ops)
    for name, fn in table.items():
        torch.onnx.register_custom_op_symbolic(name, fn, version)
    return table


@contextlib.contextmanager
def registered(ops: Iterable | None = None, opset_version: int | None = None):
    """Registers the symbolics for the `with` block, then restores what was registered before."""
    version = opset_version or default_opset()
    table = symbolics(ops)
    before, absent = {}, set()
    for name in table:
        group = _group(name)
        if group is None:
            absent.add(name)
        fns = getattr(group, "_functions", None)
        if fns is not None and fns.overridden(version):
            before[name] = fns._overrides[version]
    try:
        for name, fn in table.items():
            torch.onnx.register_custom_op_symbolic(name, fn, version)
        yield table
    finally:
        for name in table:
            if name in before:
                torch.onnx.register_custom_op_symbolic(name, before[name], version)
            else:
                torch.onnx.unregister_custom_op_symbolic(name, version)
                # torch 2.13 keeps an empty function group, after which the exporter fails with
                # "min() arg is an empty sequence" instead of "operator not supported": drop it
                reg, group = _registry(), _group(name)
                if name in absent and group is not None and not len(getattr(group, "_functions", [0])):
                    reg._registry.pop(name, None)


def default_opset() -> int:
    """The opset the TorchScript exporter uses when not told (torch 2.13: 20)."""
    try:
        from torch.onnx import _constants

        return _constants.ONNX_DEFAULT_OPSET
    except Exception:  # pragma: no cover
        return 17
