"""Export PyTorch models that use ortcustom's ops to ONNX, with either of PyTorch's exporters.

    import onnxruntime as ort, ortcustom, ortcustom.export
    m = ortcustom.export.export(model, (x,))                  # dynamo=True (the default) or False
    sess = ort.InferenceSession(m.SerializeToString(),
                                ortcustom.session_options(*ortcustom.export.domains(m)))

Which torch ops become ours is `ops=`: "inverse" (the default: aten::inverse and aten::linalg_inv
-> Inverse, in domain com.microsoft; ONNX has no inverse), "group_norm" (aten::group_norm ->
GroupNorm, in domain "ortcustom"), the other names of BUILTIN and GROUPS ("linalg": torch.linalg's
ops that ortcustom has; a torch op of several results maps to an op of as many outputs),
`inverse(domain=...)` / `group_norm(domain=...)` for other
domains, and `map_op(...)` for your own torch ops, and a `Domain` of your own ops declared with
`Op(..., torch="ns::name")` (made torch ops by ortcustom.torch_ops.register): each exports to itself,
in that domain. `torch.ops.ortcustom.*` (ortcustom.torch_ops:
our kernels run by PyTorch) always export to our ops.

Built from, and public for use with torch.onnx.export directly: `symbolics` (TorchScript
exporter) and `translation` (dynamo exporter's custom_translation_table).
"""
from __future__ import annotations

try:
    import torch
except ImportError as e:  # pragma: no cover - exercised only without torch
    from .. import _INSTALL_TORCH

    raise ImportError(f"ortcustom.export needs PyTorch: {_INSTALL_TORCH}") from e

import io
from typing import Iterable

from .. import ops as _ops
from ..registry import Domain, Op
from . import symbolics, translation
from .mapping import (BUILTIN, DEFAULT_DOMAINS, DEFAULT_OPS, GROUPS, METADATA_KEY, InvalidAttribute, OpMapping,
                      cholesky, cholesky_ex, group_norm, inverse, known_op, map_op, metadata, package_op, resolve,
                      searchsorted, slogdet, solve, solve_ex, solve_triangular)
from .symbolics import registered as registered_symbolics
from .translation import custom_translation_table


def export(model, args, f=None, *, dynamo: bool = True, ops: Iterable | None = DEFAULT_OPS, **kwargs):
    """Exports `model` (called with `args`) to ONNX, its ops in `ops` (see the module doc) as
    ortcustom's; returns the onnx.ModelProto (IR version lowered to what the installed
    onnxruntime loads) and writes it to `f` (path or binary file) when given.

    `dynamo=True` uses torch.onnx.export's dynamo exporter with our custom_translation_table;
    `dynamo=False` the TorchScript exporter with our symbolics (registered for the call only) and
    custom_opsets. Other keyword arguments go to torch.onnx.export (opset_version, input_names,
    dynamic_shapes / dynamic_axes, ...); a custom_translation_table or custom_opsets of yours is
    merged with ours (yours wins).
    """
    import onnx

    from ..schemas import register_op
    from ..testing import for_runtime

    mappings = resolve(ops)
    try:
        proto = (_dynamo if dynamo else _torchscript)(model, args, mappings, kwargs)
    except Exception as e:  # an exporter may wrap our refusal in pages of its own advice: ours is the error
        ours = _cause(e, InvalidAttribute)  # (the mapping's check, or a torch op's while traced)
        if ours is None or ours is e:
            raise
        raise ours from None
    used = {(n.domain, n.op_type) for n in _nodes(proto)}
    for m in mappings:  # onnx.checker and shape inference then know the model's ops
        if (m.domain, m.name) in used:
            register_op(m.op, m.domain)
    value = metadata(m for m in mappings if (m.domain, m.name) in used)
    if value:
        del_idx = [i for i, p in enumerate(proto.metadata_props) if p.key == METADATA_KEY]
        for i in reversed(del_idx):
            del proto.metadata_props[i]
        proto.metadata_props.add(key=METADATA_KEY, value=value)
    for_runtime(proto)
    if f is not None:
        onnx.save_model(proto, f)
    return proto


def _dynamo(model, args, mappings, kwargs):
    table = {ov: translation.translation(m, ov) for m in mappings for ov in m.overloads}
    table.update(kwargs.pop("custom_translation_table", None) or {})
    kwargs.setdefault("verbose", False)
    return torch.onnx.export(model, args, dynamo=True, custom_translation_table=table, **kwargs).model_proto


def _torchscript(model, args, mappings, kwargs):
    import onnx

    opset = kwargs.pop("opset_version", None) or symbolics.default_opset()
    # a custom domain used without an entry gets version 1; naming unused ones makes torch warn
    opsets = {m.domain: m.version for m in mappings if m.version != 1}
    opsets.update(kwargs.pop("custom_opsets", None) or {})
    if kwargs.get("input_names") is None and isinstance(model, torch.nn.Module):
        kwargs["input_names"] = _input_names(model, args)
    buf = io.BytesIO()
    with symbolics.registered(mappings, opset):
        torch.onnx.export(model, args, buf, dynamo=False, opset_version=opset, custom_opsets=opsets, **kwargs)
    return onnx.load_from_string(buf.getvalue())


def _cause(e: BaseException, kind: type) -> BaseException | None:
    """The first exception of type `kind` in e's chain of causes (e itself included)."""
    seen = set()
    while e is not None and id(e) not in seen:
        if isinstance(e, kind):
            return e
        seen.add(id(e))
        e = e.__cause__ or e.__context__
    return None


def _input_names(model, args) -> list[str] | None:
    """The forward's parameter names for the tensors in `args` (the TorchScript exporter otherwise
    names inputs after its internal values)."""
    import inspect

    if not isinstance(args, tuple):
        args = (args,)
    try:
        params = list(inspect.signature(model.forward).parameters.values())
    except (TypeError, ValueError):
        return None
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params[:len(args)]) or len(args) > len(params):
        return None
    if isinstance(args[-1], dict) or not all(isinstance(a, torch.Tensor) for a in args):
        return None
    return [p.name for p in params[:len(args)]]


def _nodes(model):
    def walk(graph_nodes):
        for n in graph_nodes:
            yield n
            for a in n.attribute:
                if a.HasField("g"):
                    yield from walk(a.g.node)
                for g in a.graphs:
                    yield from walk(g.node)

    yield from walk(model.graph.node)
    for fn in model.functions:
        yield from walk(fn.node)


def domains(model) -> list[Domain]:
    """The ortcustom Domains that `model` (an onnx.ModelProto, e.g. from export) needs, one per
    custom domain its nodes use, with the ops of ours they call, at the model's opset version:

        ort.InferenceSession(m.SerializeToString(), ortcustom.session_options(*domains(m)))

    A node `domain::name` is ours when the model's metadata (written by export) says which built-in
    op it is, when a mapping made in this process (map_op, ...) produces it, when the metadata names
    the package that declares its op (imported here: an ImportError naming the package if it cannot
    be), when its domain is "ortcustom" and name a built-in op, or when it is com.microsoft::Inverse.
    Other nodes (ONNX's, ORT's contrib ops; ops declared outside any package, e.g. in a script) get
    no domain here: register theirs yourself."""
    builtin = {op.name: op for op in _ops.ALL}
    declared, packaged = {}, {}
    for p in model.metadata_props:
        if p.key == METADATA_KEY and p.value:
            for item in p.value.split(";"):
                node, _, base = item.partition("=")
                dom, _, name = node.partition("::")
                if base in builtin:
                    declared[(dom, name)] = base
                elif ":" in base:
                    packaged[(dom, name)] = base.partition(":")[::2]
    versions = {o.domain: o.version for o in model.opset_import}
    found: dict[str, list[Op]] = {}
    for n in _nodes(model):
        dom = n.domain
        if dom in ("", "ai.onnx", "ai.onnx.ml"):
            continue
        op = None
        if (dom, n.op_type) in declared:
            base = builtin[declared[(dom, n.op_type)]]
            op = known_op(dom, n.op_type)
            if op is None or op.native != base.native:
                op = base if n.op_type == base.name else _renamed(base, n.op_type)
        else:
            op = known_op(dom, n.op_type)
            if op is None and (dom, n.op_type) in packaged:
                pkg, base_name = packaged[(dom, n.op_type)]
                op = package_op(pkg, base_name, f"{dom}::{n.op_type}")
                op = op if n.op_type == op.name else _renamed(op, n.op_type)
            if op is None and (dom == "ortcustom" or (dom, n.op_type) == ("com.microsoft", "Inverse")):
                op = builtin.get(n.op_type)
        if op is not None and all(have.name != op.name for have in found.setdefault(dom, [])):
            found[dom].append(op)
    return [Domain(dom, versions.get(dom, 1)).add(*got) for dom, got in found.items() if got]


_renamed_cache: dict[tuple[str, str], Op] = {}


def _renamed(base: Op, name: str) -> Op:
    import dataclasses

    key = (base.name, name)
    if key not in _renamed_cache:
        _renamed_cache[key] = dataclasses.replace(base, name=name)
    return _renamed_cache[key]


__all__ = ["BUILTIN", "DEFAULT_DOMAINS", "DEFAULT_OPS", "GROUPS", "InvalidAttribute", "METADATA_KEY", "OpMapping",
           "cholesky", "cholesky_ex", "custom_translation_table", "domains", "export", "group_norm", "inverse", "map_op",
           "registered_symbolics", "searchsorted", "slogdet", "solve", "solve_ex", "solve_triangular", "symbolics",
           "translation"]
