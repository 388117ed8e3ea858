"""Helpers for tests of custom ops: one-node models that the installed ONNX Runtime accepts.

onnx writes the newest IR version it knows (onnx 1.23: 14), which older runtimes refuse (ORT 1.31
reads up to 13, 1.17 up to 9). `max_ir_version()` asks the installed runtime; `for_runtime(model)`
lowers a model's IR version to it.
"""
from __future__ import annotations

import functools
import re
from typing import Iterable, Mapping

import numpy as np

from .registry import Domain, Op
from .signatures import pick, siblings
from .types import name_of_dtype, onnx_enum

# Fallback when the runtime's refusal cannot be read: ORT minor version -> highest IR version.
_IR_BY_ORT_MINOR = {17: 9, 18: 10, 19: 10, 20: 10, 21: 10}


@functools.lru_cache(maxsize=None)
def max_ir_version() -> int:
    """The highest ONNX IR version the installed onnxruntime loads (probed once, then cached)."""
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"])], "probe",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = onnx.IR_VERSION
    try:
        ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        return onnx.IR_VERSION
    except Exception as e:  # "Unsupported model IR version: 14, max supported IR version: 13"
        m = re.search(r"max supported IR version:\s*(\d+)", str(e))
        if m:
            return int(m.group(1))
        from .session import ort_version

        minor = ort_version()[1]
        return _IR_BY_ORT_MINOR.get(minor, 9)


def for_runtime(model):
    """`model` with its IR version lowered to what the installed onnxruntime loads (in place)."""
    model.ir_version = min(model.ir_version, max_ir_version())
    return model


def _value_info(name: str, spec):
    from onnx import helper

    if spec is None:
        raise ValueError(f"no type for {name!r}")
    if isinstance(spec, np.ndarray):
        elem, shape = name_of_dtype(spec.dtype), spec.shape
    else:
        elem, shape = spec
        if not isinstance(elem, str):
            elem = name_of_dtype(elem)
    return helper.make_tensor_value_info(name, onnx_enum(elem), None if shape is None else list(shape))


def make_model(op: Op | str, domain: Domain | str, inputs: Mapping[str, object], *,
               outputs: Mapping[str, object] | None = None, attrs: Mapping[str, object] | None = None,
               node_name: str = "n0", domain_version: int | None = None, initializers: Iterable[str] = ()):
    """A one-node model calling `op` of `domain`, loadable by the installed onnxruntime.

    `inputs` maps input names, in order, to an array (its type and shape are used), a pair
    `(element type or dtype, shape)` (shape None: unknown rank; dims may be str for symbolic), or
    None for an absent optional input (the node gets "" there). `outputs` likewise; by default the
    outputs of an `Op` declaration, typed from its constraints, with unknown shapes. `initializers`:
    names of `inputs` (given as arrays) that the model holds as initializers, not graph inputs (what
    `Input(constant=True)` needs). A `Domain`'s ONNX schemas are registered with onnx
    (ortcustom.schemas.register).
    """
    from onnx import helper, numpy_helper

    if isinstance(domain, Domain):
        from .schemas import register

        register(domain)  # onnx.checker and shape inference then know the model's ops
    if isinstance(op, Op) and isinstance(domain, Domain) and len(siblings(domain.ops, op)) > 1:
        # several declarations of the name: the outputs are typed by the one the inputs pick
        op = pick(siblings(domain.ops, op), [None if s is None else _elem(s) for s in inputs.values()]) or op
    op_name = op.name if isinstance(op, Op) else op
    dom = domain.name if isinstance(domain, Domain) else domain
    version = domain_version or (domain.version if isinstance(domain, Domain) else 1)
    initializers = tuple(initializers)
    for n in initializers:
        if not isinstance(inputs.get(n), np.ndarray):
            raise ValueError(f"initializers names {n!r}: give its value in inputs as an array")
    graph_inputs = [_value_info(n, s) for n, s in inputs.items() if s is not None and n not in initializers]
    node_inputs = [n if s is not None else "" for n, s in inputs.items()]
    while node_inputs and node_inputs[-1] == "":
        node_inputs.pop()
    if outputs is None:
        if not isinstance(op, Op):
            raise ValueError("give outputs= when op is a name, not an ortcustom.Op")
        outputs = {o.name: (_output_type(op, o, inputs), None) for o in op.outputs if not o.optional}
    graph_outputs = [_value_info(n, s) for n, s in outputs.items()]
    node = helper.make_node(op_name, node_inputs, list(outputs), name=node_name, domain=dom, **(attrs or {}))
    graph = helper.make_graph([node], f"{op_name}_model", graph_inputs, graph_outputs,
                              [numpy_helper.from_array(inputs[n], n) for n in initializers])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(dom, version),
                                                    helper.make_opsetid("", 17)])
    return for_runtime(model)


def _elem(spec) -> str:
    """The element type name of an input spec (an array, or a pair (type or dtype, shape))."""
    if isinstance(spec, np.ndarray):
        return name_of_dtype(spec.dtype)
    return spec[0] if isinstance(spec[0], str) else name_of_dtype(spec[0])


def _output_type(op: Op, out, inputs) -> str:
    if out.type not in op.types:
        return out.type
    for decl in op.inputs:
        spec = inputs.get(decl.name)
        if decl.type == out.type and spec is not None:
            return _elem(spec)
    raise ValueError(f"cannot tell the type of output {out.name!r} of {op.name}; give outputs=")
