"""Dynamo exporter (`torch.onnx.export(..., dynamo=True)`, the default): the custom translation table.

    from ortcustom.export import translation
    torch.onnx.export(model, args, dynamo=True,
                      custom_translation_table=translation.custom_translation_table())

Each entry maps a torch OpOverload (aten.inverse.default, ...) to an onnxscript function (traced:
it records one node, `domain::name`, with our op's ONNX schema). Ops in the table are kept whole by
the exporter's decompositions, so aten.inverse never becomes linalg_inv_ex and its error-check
side effect (which has no ONNX translation).
"""
from __future__ import annotations

import dataclasses
import inspect
from typing import Callable, Iterable

from ..schemas import schema as onnx_schema
from .mapping import OpMapping, resolve


def _signature(overload) -> inspect.Signature:
    params, kw_only = [], False
    for a in overload._schema.arguments:
        kind = inspect.Parameter.KEYWORD_ONLY if (a.kwarg_only or kw_only) else inspect.Parameter.POSITIONAL_OR_KEYWORD
        kw_only = kw_only or a.kwarg_only
        default = a.default_value if a.has_default_value() else inspect.Parameter.empty
        params.append(inspect.Parameter(a.name, kind, default=default))
    return inspect.Signature(params)


def _onnxscript():
    try:
        import onnxscript
    except ImportError as e:  # pragma: no cover - exercised only without onnxscript
        from .. import _INSTALL_TORCH

        raise ImportError(f"ortcustom.export needs onnxscript for the dynamo exporter (dynamo=True): "
                          f"{_INSTALL_TORCH}") from e
    return onnxscript


def onnx_op(mapping: OpMapping):
    """The onnxscript op `domain::name` of `mapping`, with our op's ONNX schema.

    onnxscript refuses a schema with an input and an attribute of the same name (GroupNorm's
    num_groups is both); such inputs are renamed in the schema given to onnxscript, which changes
    nothing in the node (inputs are positional)."""
    op = mapping.op
    attrs = {a.name for a in op.attrs}
    if attrs & {i.name for i in op.inputs}:
        names = {i.name for i in op.inputs} | {o.name for o in op.outputs} | attrs
        renamed = {}
        for i in op.inputs:
            if i.name in attrs:
                new = i.name + "_input"
                while new in names:
                    new += "_"
                renamed[i.name] = new
        outputs = [dataclasses.replace(o, shape=renamed.get(o.shape, o.shape)) if isinstance(o.shape, str) else o
                   for o in op.outputs]
        # a schema-only copy (declarations are data: nothing is looked up)
        op = dataclasses.replace(op, inputs=[dataclasses.replace(i, name=renamed.get(i.name, i.name))
                                             for i in op.inputs], outputs=outputs, torch=None, torch_args=None)
    onnxscript = _onnxscript()
    opset = onnxscript.values.Opset(mapping.domain, mapping.version)
    return onnxscript.values.Op(opset, mapping.name, op_schema=onnx_schema(op, mapping.domain))


def translation(mapping: OpMapping, overload=None) -> Callable:
    """The onnxscript (traced) function that emits `mapping`'s node for one of its torch ops."""
    overload = overload or mapping.overloads[0]
    bindings = mapping.bindings[overload]
    op = mapping.op
    node = onnx_op(mapping)
    sig = _signature(overload)

    def fn(*args, **kwargs):
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        inputs, attrs = [None] * len(op.inputs), {}
        for b in bindings:
            v = bound.arguments[b.torch_name]
            if b.kind == "drop" or v is None:
                continue
            if b.kind == "attr":
                if not isinstance(v, (bool, int, float, str, list, tuple)):
                    raise ValueError(f"exporting {overload._schema.name} as {mapping.node}: argument "
                                     f"{b.torch_name!r} feeds attribute {b.target!r} and must be a constant, got {v!r}")
                attrs[b.target] = mapping.attribute(overload, b, v)  # coerced and checked
            else:
                inputs[b.index] = v  # Python scalars become constants of the input's type
        while inputs and inputs[-1] is None:
            inputs.pop()
        return node(*inputs, **attrs)

    fn.__signature__ = sig
    fn.__name__ = fn.__qualname__ = f"{mapping.domain.replace('.', '_')}_{mapping.name}"
    return fn


def custom_translation_table(ops: Iterable | None = None) -> dict:
    """{torch OpOverload: onnxscript function} for `torch.onnx.export(custom_translation_table=...)`,
    for the mappings `ops` (see ortcustom.export.export) and torch.ops.ortcustom.*."""
    return {ov: translation(m, ov) for m in resolve(ops) for ov in m.overloads}


def custom_opsets(ops: Iterable | None = None) -> dict[str, int]:
    return {m.domain: m.version for m in resolve(ops)}
