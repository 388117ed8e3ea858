"""Native kernels called directly, without ONNX Runtime: the same compiled code a session runs.

    from ortcustom import kernels
    y = kernels.call(Inverse, x)                 # any native op, by its declaration
    y = kernels.inverse(x)                       # the built-in ops, by snake_case name
    y = kernels.group_norm(x, 4, scale, bias, epsilon=1e-5)

An op whose last output is variadic with `homogeneous=False` takes `out_types=` (a sequence of element
type names or dtypes): the type of each of that output's tensors, and so their count (in a session,
the model's outputs say them).

Inputs come by position (or by name), attributes by keyword (checked as in a session). NumPy arrays (anything
np.asarray takes) run the CPU kernel, on threads() threads; arrays on a GPU (CuPy, torch CUDA tensors: any
`__cuda_array_interface__`) run the CUDA kernel on `stream` (default: the array library's current
stream), on the array's GPU. Outputs are new arrays of the input's library, or `out=` (an array,
or a tuple per output): C-contiguous, writeable, of the output's shape and type, and apart from
every input unless the kernel declares it may write over that input in place.
"""
from __future__ import annotations

import math
import os
import re
import sys
import weakref

import numpy as np

from . import _customop, native
from .inference import infer_outputs
from .op_table import binding_row
from .registry import InvalidAttribute, Op, check_text, checked
from .signatures import accepted, pick, type_of
from .strings import pack
from .types import ELEMENT_TYPES, canonical, name_of_dtype, name_of_enum, numpy_dtype, onnx_enum

_TYPE_OF_DTYPE = {t.numpy: name for name, t in ELEMENT_TYPES.items() if t.numpy is not None}
_ENUM = {name: onnx_enum(name) for name in ELEMENT_TYPES}
_TEXT = numpy_dtype("string")  # object: a string output's elements are str

_CPU, _CUDA = 0, 1


def _lib(a) -> str:
    """The library of an array, by its type's top-level module: "numpy", "cupy", "torch", ..."""
    return type(a).__module__.split(".")[0]


def _accepts(names) -> str:
    return ", ".join(t if numpy_dtype(t) is None or numpy_dtype(t) == _TEXT else str(numpy_dtype(t)) for t in names)


def _no_numpy(names) -> str:
    """What of `names` no NumPy array can be (bfloat16, float8, the 4-bit types), for messages."""
    missing = [t for t in names if numpy_dtype(t) is None]
    return f" ({', '.join(missing)}: no NumPy dtype, so direct calls take none)" if missing else ""


class _Operand:
    """One input as the kernel sees it: pointer, shape, element type, device, byte range."""

    __slots__ = ("value", "dtype", "shape", "ptr", "device", "nbytes", "type", "keep")

    def __init__(self, op: Op, decl, value, device: int):
        self.value = value
        if device == _CUDA and not decl.cpu:
            if not hasattr(value, "__cuda_array_interface__"):
                raise ValueError(f"{op.name}: {decl.name} is in host memory while other inputs are on a GPU")
            cai = value.__cuda_array_interface__
            self.dtype = np.dtype(cai["typestr"])
            self.shape = tuple(cai["shape"])
            self.ptr = cai["data"][0]
            strides = cai.get("strides")
            if strides is not None and 0 not in self.shape and strides != _c_strides(self.shape, self.dtype.itemsize):
                raise ValueError(f"{op.name}: {decl.name} must be C-contiguous")
            self.device = _CUDA
        else:
            if type(value) is not np.ndarray and hasattr(value, "__cuda_array_interface__"):
                raise ValueError(f"{op.name}: {decl.name} is on a GPU; " + (
                    "it must stay in host memory (declared cpu=True)" if decl.cpu else
                    "give all inputs on the same device"))
            if type(value) is int and decl.type not in op.types:
                value = np.asarray(value, dtype=numpy_dtype(decl.type))  # a Python int for an int input
            arr = np.asarray(value)  # (np.ascontiguousarray would make a 0-d array 1-d)
            if not arr.flags.c_contiguous:
                arr = np.ascontiguousarray(arr)
            self.value, self.dtype, self.shape = arr, arr.dtype, arr.shape
            self.device = _CPU
            if arr.dtype.kind in "USO":  # text: the kernel reads oc_string elements (kernel.h)
                self.keep = _pack_strings(op, decl, arr)
                self.ptr, self.nbytes, self.type = _customop.address(self.keep[1]) if arr.size else 0, 0, "string"
                return
            self.ptr, self.nbytes, self.type = _customop.address(arr), arr.nbytes, _TYPE_OF_DTYPE.get(arr.dtype)
            return
        self.nbytes = math.prod(self.shape) * self.dtype.itemsize
        self.type = _TYPE_OF_DTYPE.get(self.dtype)


def _pack_strings(op: Op, decl, arr):
    """A string input as the kernel reads it (strings.pack), errors naming the op and the input."""
    try:
        return pack(arr)
    except (TypeError, ValueError) as e:
        raise type(e)(f"{op.name}: {decl.name} {e}") from None


def _c_strides(shape, item):
    out, acc = [], item
    for d in reversed(shape):
        out.append(acc)
        acc *= d
    return tuple(reversed(out))


class _Call:
    """One direct call: what the kernel's host functions (outputs, scratch) need, with the GIL."""

    __slots__ = ("op_name", "op", "n_outputs", "out_dtypes", "like", "device", "device_id", "stream", "given",
                 "inplace", "operands", "results", "keep", "error")

    def __init__(self, op: Op, out_dtypes, like, device: int, device_id: int, stream: int, given, inplace,
                 operands):
        self.op_name = op.name
        self.op = op
        self.n_outputs = len(out_dtypes)  # per output tensor (a variadic output's: one each)
        self.out_dtypes = out_dtypes
        self.like, self.device, self.device_id, self.stream = like, device, device_id, stream
        self.given, self.inplace, self.operands = given, inplace, operands
        self.results = [None] * self.n_outputs
        self.keep = []  # scratch memory, alive until the call returns
        self.error = None

    def check_overlaps(self):
        """Before the kernel runs: no given out array overlaps an input, except exactly the input
        the kernel may write that output over."""
        for i, a in enumerate(self.given):
            if a is None:
                continue
            ptr, shape, dtype, _ = _describe_out(a, self.device)
            nbytes = math.prod(shape) * dtype.itemsize if shape is not None else 0
            for j, x in enumerate(self.operands):
                if x is None or nbytes == 0 or x.nbytes == 0 or x.device != self.device:
                    continue
                if ptr < x.ptr + x.nbytes and x.ptr < ptr + nbytes:
                    if ptr == x.ptr and self.inplace and self.inplace[i] == j and x.nbytes == nbytes:
                        continue
                    raise ValueError(f"{self.op_name}: out overlaps {self.op.inputs[j].name}; give a separate array")

    def output(self, i: int, shape: tuple) -> int:
        name = self.op.outputs[min(i, len(self.op.outputs) - 1)].name
        dtype = self.out_dtypes[i]
        if self.given is not None and self.given[i] is not None:
            a = self.given[i]
            ptr, ashape, adtype, ok = _describe_out(a, self.device)
            if ashape != shape or adtype != dtype or not ok:
                raise ValueError(f"{self.op_name}: out must be a writeable C-contiguous {dtype} array of shape "
                                 f"{shape} on the inputs' device (output {name}), got {adtype} {ashape}")
            self.results[i] = a
            return ptr
        if dtype == _TEXT:  # its elements come through strings() once the kernel is done
            self.results[i] = np.full(shape, "", object)
            return 0
        try:
            a = _empty(self.like, shape, dtype, self.device)
        except (ValueError, MemoryError) as e:
            raise _customop.cannot_allocate(self.op, i, shape, dtype, e) from None
        self.results[i] = a
        ptr, _, _, _ = _describe_out(a, self.device)
        return ptr

    def strings(self, i: int, values: list) -> None:
        """String output i's elements, as the kernel set them (valid UTF-8: the glue checked)."""
        self.results[i].reshape(-1)[:] = values

    def scratch(self, nbytes: int) -> int:
        """Device scratch memory (host scratch is the glue's own)."""
        buf, ptr = _device_scratch(self.like, nbytes, self.stream)
        self.keep.append(buf)
        return ptr


def _describe_out(a, device):
    """(pointer, shape, dtype, writeable and C-contiguous) of an output array."""
    if device == _CUDA:
        if not hasattr(a, "__cuda_array_interface__"):
            return 0, None, None, False
        cai = a.__cuda_array_interface__
        dt, shape = np.dtype(cai["typestr"]), tuple(cai["shape"])
        strides = cai.get("strides")
        ok = not cai["data"][1] and (strides is None or 0 in shape or strides == _c_strides(shape, dt.itemsize))
        return cai["data"][0], shape, dt, ok
    if not isinstance(a, np.ndarray):
        return 0, None, None, False
    flags = a.flags
    return _customop.address(a), a.shape, a.dtype, flags.c_contiguous and flags.writeable


def _empty(like, shape, dtype, device):
    if device == _CPU:
        return np.empty(shape, dtype)
    mod = _lib(like)
    if mod == "cupy":
        import cupy

        with cupy.cuda.Device(like.device.id):
            return cupy.empty(shape, dtype)
    if mod == "torch":
        import torch

        return torch.empty(shape, dtype=getattr(torch, dtype.name), device=like.device)
    raise ValueError(f"give out= for GPU arrays of type {type(like).__name__} (ortcustom allocates CuPy and "
                     f"torch arrays)")


def _device_scratch(like, nbytes, stream):
    """Device memory from the array's own library, ordered on `stream` (its pool hands the memory
    out again only after the kernel's work there)."""
    mod = _lib(like)
    if mod == "cupy":
        import cupy

        with cupy.cuda.Device(like.device.id):
            if stream == cupy.cuda.get_current_stream().ptr:
                buf = cupy.empty(nbytes, dtype=cupy.uint8)
            else:
                with cupy.cuda.ExternalStream(stream):  # CuPy's pool keeps free lists per stream
                    buf = cupy.empty(nbytes, dtype=cupy.uint8)
        return buf, buf.data.ptr
    if mod == "torch":
        import torch

        buf = torch.empty(nbytes, dtype=torch.uint8, device=like.device)
        if stream != torch.cuda.current_stream(like.device).cuda_stream:
            buf.record_stream(torch.cuda.ExternalStream(stream, device=like.device))
        return buf, buf.data_ptr()
    raise ValueError(f"the kernel needs device scratch memory: give CuPy or torch arrays, not "
                     f"{type(like).__name__}")


def _device_and_stream(like, stream):
    mod = _lib(like)
    if mod == "cupy":
        import cupy

        dev = like.device.id
        if stream is None:
            with cupy.cuda.Device(dev):
                stream = cupy.cuda.get_current_stream().ptr
        return dev, int(stream)
    if mod == "torch":
        import torch

        dev = like.device.index
        if stream is None:
            stream = torch.cuda.current_stream(like.device).cuda_stream
        return dev, int(stream)
    return 0, int(stream or 0)  # another library: device 0, the given stream or the default one


class _Plan:
    """What a direct call of an op needs that does not change between calls (made once per op)."""

    def __init__(self, op: Op):
        self.decls = tuple(op.inputs)
        self.attrs = {a.name: a for a in op.attrs}
        self.by_keyword = {d.name: i for i, d in enumerate(self.decls) if d.name not in self.attrs}
        self.defaults = {a.name: _checked_attr(op, a, a.default) for a in op.attrs if not a.required}
        self.kernel = op.kernel
        self.inplace = {_CPU: _inplace(self.kernel.cpu), _CUDA: _inplace(self.kernel.cuda)}
        self.op_def = native.op_def(op)
        self.rules = any(callable(o.shape) for o in op.outputs)  # shape rules: the kernel is held to them
        self.rows = {}  # (binding, out_types) -> (type row, per output tensor its dtype)
        self.constants = tuple(i for i, d in enumerate(self.decls) if d.constant)  # read by the kernel's create
        self.attr_order = tuple(sorted(self.attrs))  # the kernel cache's key: (name, value) pairs in this order
        self.tensors = frozenset(a.name for a in op.attrs if a.kind == "tensor")
        self.checked = {}  # (name, type, value) -> _checked_attr's value, for hashable values
        self.shapes = {}  # (input shapes, attributes) -> what the shape rules said (a rule is a function of them)
        # _repeat_key -> what a call with that key resolved to (_customop.Repeat, which runs it again): a
        # model's calls repeat their types, shapes and attributes, and none of the checks reads an input's
        # values (but a constant input's, and a text input's elements, packed per call: those, and string
        # outputs, take the full path each time)
        self.repeats = {}

    def attr_value(self, op: Op, a, v):
        """_checked_attr(op, a, v), remembered for a scalar v by its attr_key (a call's attributes
        repeat), anything else checked every time."""
        key = attr_key(a.name, v)
        if key is None:
            return _checked_attr(op, a, v)
        got = self.checked.get(key)
        if got is None:
            got = _checked_attr(op, a, v)
            if len(self.checked) < 256:
                self.checked[key] = got
        return got


def _repeat_key(inputs, attrs):
    """What decides every check of a CPU call: per input None, int for a Python int, or (dtype,
    shape) of a C-contiguous NumPy array; per attribute its attr_key; None where anything else is
    given (the full path)."""
    sig = []
    for v in inputs:
        if v is None:
            sig.append(None)
        elif type(v) is np.ndarray and v.flags.c_contiguous:
            sig.append((v.dtype, v.shape))
        elif type(v) is int:
            sig.append(int)
        else:
            return None
    for k, v in attrs.items():
        a = attr_key(k, v)
        if a is None:
            return None
        sig.append(a)
    return tuple(sig)


def attr_key(name: str, v):
    """What identifies an attribute value for remembering its check: scalars only, tagged by type
    (1.0 is not 1 nor True), a float zero or NaN by its text (-0.0 == 0.0, and a NaN equals nothing,
    as numbers); None for anything else (checked every time)."""
    t = type(v)
    if t is float:
        return (name, t, v) if v and v == v else (name, t, str(v))
    if t in (int, bool, str, bytes):
        return (name, t, v)
    return None


def _inplace(addr):
    return _customop.kernel_info(addr)["inplace"] if addr else None


_plans: "weakref.WeakKeyDictionary[Op, _Plan]" = weakref.WeakKeyDictionary()


def _plan(op: Op) -> _Plan:
    p = _plans.get(op)
    if p is None:
        p = _plans[op] = _Plan(op)
    return p


_threads = None


def threads() -> int:
    """Threads a direct call's kernel runs its tasks on: set_threads(n), else torch's count when
    torch is imported (a torch op uses the cores torch does), else the machine's cores."""
    if _threads is not None:
        return _threads
    torch = sys.modules.get("torch")
    if torch is not None:
        return torch.get_num_threads()
    return _CORES


_CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def set_threads(n: int | None) -> None:
    """Threads for direct calls (None: the default of threads())."""
    global _threads
    if n is not None and (not isinstance(n, int) or n < 1):
        raise ValueError(f"threads must be an int >= 1 or None, got {n!r}")
    _threads = n


def call(op, *inputs, out=None, stream=None, out_types=None, **attrs):
    """Runs `op`'s native kernel on `inputs` (by position; None for an absent optional one) with
    the attributes `attrs`; returns its output (a tuple for several). `op`: an Op, or the
    declarations of one op name (`domain.declarations(name)`), of which the inputs' element types
    pick one, as in a session. `out_types`: for an op whose last output is variadic with
    homogeneous=False (only), the element type of each of its tensors."""
    if isinstance(op, (tuple, list)):
        op = _sibling(tuple(op), inputs, attrs)
    if not isinstance(op, Op) or op.native is None:
        raise TypeError(f"kernels.call takes an Op with a native kernel, got {op!r}")
    plan = _plan(op)
    repeat = None
    if out is None and stream is None and out_types is None and not plan.constants:
        repeat = _repeat_key(inputs, attrs)
        got = plan.repeats.get(repeat) if repeat is not None else None
        if got is not None:
            return got.run(inputs, threads())
    kernel = plan.kernel
    name, decls = op.name, plan.decls
    if len(inputs) > len(decls) and not (decls and decls[-1].variadic):
        raise TypeError(f"{name}: takes {len(decls)} inputs ({', '.join(d.name for d in decls)}), got {len(inputs)}")
    ints = tuple(i for i, v in enumerate(inputs) if type(v) is int)
    inputs = list(inputs) + [None] * (len(decls) - len(inputs))
    by_keyword = [k for k in attrs if k in plan.by_keyword] if attrs else ()
    if by_keyword:
        repeat = None  # (the repeat path reads inputs by position)
    for k in by_keyword:  # an input by keyword
        i = plan.by_keyword[k]
        if inputs[i] is not None:
            raise TypeError(f"{name}: input {k} given twice")
        inputs[i] = attrs.pop(k)
    per_input = decls if len(inputs) == len(decls) else [decls[min(i, len(decls) - 1)] for i in range(len(inputs))]
    device = _CPU
    for d, v in zip(per_input, inputs):
        if v is None:
            if not d.optional:
                raise TypeError(f"{name}: input {d.name} is required")
        elif type(v) is not np.ndarray and not d.cpu and hasattr(v, "__cuda_array_interface__"):
            device = _CUDA
    if not (kernel.cuda if device == _CUDA else kernel.cpu):
        kind = "CUDA" if device == _CUDA else "CPU"
        why = f" ({no_cuda_reason(kernel)})" if device == _CUDA else ""
        raise RuntimeError(f"{name}: kernel {kernel.name!r} has no {kind} entry{why}")
    operands = [None if v is None else _Operand(op, d, v, device) for d, v in zip(per_input, inputs)]
    binding = {}
    for d, x in zip(per_input, operands):
        if x is None:
            continue
        allowed = op.types.get(d.type)
        if x.type is None or (x.type not in allowed if allowed else x.type != d.type):
            raise TypeError(f"{name}: {d.name} has dtype {x.dtype}; accepts {_accepts(allowed or (d.type,))}"
                            f"{_no_numpy(allowed or (d.type,))}")
        if d.variadic and not d.homogeneous:
            continue  # each tensor of a type of its own (checked above): it binds no constraint, as in ORT
        if allowed and binding.setdefault(d.type, x.type) != x.type:
            raise TypeError(f"{name}: {d.name} has dtype {x.dtype}, but {d.type} is already "
                            f"{numpy_dtype(binding[d.type])} from an earlier input")
    varied = _varied_types(op, out_types)
    key = (tuple(binding.items()), varied)
    typed = plan.rows.get(key)
    if typed is None:  # the binding's element types (inputs, then each output tensor), once per binding;
        # a constraint only absent inputs have takes its first type, as the outputs do
        row = binding_row(op, binding)
        if varied is not None:  # a heterogeneous variadic output: a type per tensor, the caller's
            row = row[:len(row) - 1] + varied
        typed = plan.rows[key] = (row, [numpy_dtype(name_of_enum(e)) for e in row[len(decls):]])
    row, out_dtypes = typed
    values = dict(plan.defaults)
    for k, v in attrs.items():
        a = plan.attrs.get(k)
        if a is None:
            raise TypeError(f"{name}: no attribute {k!r}; attributes: {list(plan.attrs)}")
        values[k] = plan.attr_value(op, a, v)
    for k, a in plan.attrs.items():
        if k not in values:
            raise TypeError(f"{name}: attribute {k} ({a.kind}) is required")
    given = None
    if out is not None:
        given = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        if len(given) != len(out_dtypes):
            raise ValueError(f"{name}: out has {len(given)} arrays; the op has {len(out_dtypes)} outputs")
    like, device_id, s = None, 0, 0
    if device == _CUDA:
        like = next(x.value for d, x in zip(per_input, operands) if x is not None and x.device == _CUDA)
        device_id, s = _device_and_stream(like, stream)
    c = _Call(op, out_dtypes, like, device, device_id, s, given, plan.inplace[device], operands)
    if given is not None:
        c.check_overlaps()
    desc = [(0, (), 0, device, 0) if x is None else (x.ptr, x.shape, _ENUM[x.type], x.device, 1)
            for x in operands]
    consts = tuple(_value_key(operands[i]) for i in plan.constants) if plan.constants else None
    keyed = tuple((k, _Tensor(values[k]) if k in plan.tensors else values[k]) for k in plan.attr_order)
    outs = None
    if plan.rules:  # what the rules say of these shapes (their errors name the op), once per shapes and attributes
        shapes = tuple(None if x is None else x.shape for x in operands)
        outs = plan.shapes.get((shapes, keyed))
        if outs is None:
            outs = infer_outputs(op, [None] * len(operands), shapes, lambda: values)
            if len(plan.shapes) < 256:
                plan.shapes[(shapes, keyed)] = outs
    res = _run(plan, c, row, desc, keyed, outs, consts)
    if (repeat is not None and device == _CPU and len(plan.repeats) < 256
            and all(x is None or x.type != "string" for x in operands) and _TEXT not in out_dtypes
            and all(per_input[i].type not in op.types for i in ints)):  # (an int for a T: its dtype by value)
        plan.repeats[repeat] = _customop.Repeat(plan.op_def, row, keyed, tuple(out_dtypes), outs,
                                                tuple(d[2] for d in desc), tuple((i, operands[i].dtype) for i in ints))
    return res


def _run(plan: _Plan, c: _Call, row, desc, keyed, outs, consts):
    _customop.run_direct(plan.op_def, c.device, row, c, desc, keyed, threads() if c.device == _CPU else 1,
                         c.device_id, c.stream, outs, consts)
    res = c.results
    return res[0] if len(res) == 1 else tuple(res)


def _varied_types(op: Op, out_types) -> tuple[int, ...] | None:
    """The ONNX types of a heterogeneous variadic last output's tensors, from the caller's `out_types`
    (each any of its constraint's types; at least min_arity); None for any other op (which takes no
    out_types). TypeError naming the op otherwise."""
    last = op.outputs[-1]
    if last.homogeneous:
        if out_types is not None:
            raise TypeError(f"{op.name}: out_types is for an op whose last output is variadic with "
                            f"homogeneous=False; {op.name}'s output types come from its inputs")
        return None
    allowed = op.types.get(last.type, (last.type,))
    if out_types is None or isinstance(out_types, (str, bytes)) or not hasattr(out_types, "__iter__"):
        raise TypeError(f"{op.name}: output {last.name} is variadic with homogeneous=False: give "
                        f"out_types=(...), the element type of each of its tensors (each one of "
                        f"{_accepts(allowed)}), got {out_types!r}")
    out = []
    for j, t in enumerate(out_types):
        try:
            n = canonical(t) if isinstance(t, str) else name_of_dtype(t)
        except (TypeError, ValueError):
            n = None
        if n not in allowed:
            raise TypeError(f"{op.name}: out_types[{j}] is {t!r}; output {last.name}'s tensors are each one of "
                            f"{_accepts(allowed)}")
        out.append(onnx_enum(n))
    if len(out) < last.min_arity:
        raise TypeError(f"{op.name}: out_types gives {len(out)} tensors for output {last.name}; it has at least "
                        f"{last.min_arity}")
    return tuple(out)


def _sibling(ops: tuple, inputs, attrs) -> Op:
    """The declaration among siblings that takes these inputs' element types."""
    if not ops or not all(isinstance(o, Op) for o in ops) or len({(o.name, o.since, o.until) for o in ops}) != 1:
        raise TypeError(f"kernels.call takes an Op, or the declarations of one op name and version "
                        f"(domain.declarations(name); versions: domain.at(opset).declarations(name)), got {ops!r}")
    values = list(inputs)
    names = [d.name for d in ops[0].inputs]
    for k, v in attrs.items():  # inputs by keyword (siblings name them alike)
        if k in names and k not in {a.name for a in ops[0].attrs}:
            i = names.index(k)
            values += [None] * (i + 1 - len(values))
            values[i] = v if values[i] is None else values[i]
    types = [None if v is None else type_of(v) for v in values]
    got = pick(ops, types)
    if got is None:
        shown = ", ".join("absent" if t is None else t for t in types)
        raise TypeError(f"{ops[0].name}: no declaration takes inputs of types ({shown}); it accepts {accepted(ops)}")
    return got


class _Tensor:
    """A tensor attribute's value as a direct call's cache key: equal by contents."""

    __slots__ = ("array", "_key")

    def __init__(self, array):
        self.array = array
        if array.dtype == object:  # text: the sizes too (elements may hold NULs)
            buf, rows = pack(array)
            data = rows[:, 1].tobytes() + buf.tobytes()
        else:
            data = array.tobytes()
        self._key = (array.shape, str(array.dtype), data)

    def __eq__(self, other):
        return isinstance(other, _Tensor) and self._key == other._key

    def __hash__(self):
        return hash(self._key)


def _value_key(x):
    """What identifies a constant input's value (the kernel's create reads it once per value): its
    contents on the host; on a GPU, its memory (address, shape, type)."""
    if x is None:
        return None
    if x.device == _CUDA:
        return (x.ptr, x.shape, str(x.dtype))
    if x.type == "string":
        return (x.shape, x.keep[1][:, 1].tobytes(), x.keep[0].tobytes())  # sizes too: elements may hold NULs
    return (x.shape, str(x.dtype), x.value.tobytes())


def _checked_attr(op: Op, a, value):
    try:
        v = checked(a, value)  # float32-rounded, as a session's kernel gets it
    except TypeError as e:
        raise TypeError(f"{op.name}: attribute {a.name}: {e}") from None
    except InvalidAttribute as e:
        raise InvalidAttribute(f"{op.name}: {e}") from None
    except ValueError as e:  # bytes that are not text (registry.NotText), ...
        raise ValueError(f"{op.name}: attribute {a.name}: {e}") from None
    for text in (v,) if isinstance(v, str) else v if a.kind == "strings" else ():
        if isinstance(text, str):
            try:
                check_text("the value", text)  # the kernel gets it as UTF-8
            except ValueError as e:
                raise ValueError(f"{op.name}: attribute {a.name}: {e}") from None
    return v


def builtin_cuda() -> bool:
    """Whether ortcustom's own kernels were built with CUDA."""
    return bool(native.builtin_info("cuda_built"))


def no_cuda_reason(kernel) -> str:
    """Why a kernel has no CUDA entry, for messages."""
    if kernel is None or os.path.realpath(kernel.library) == os.path.realpath(native.builtin_library_path()):
        return "this ortcustom was built without CUDA kernels" if not builtin_cuda() else "no CUDA kernel"
    return f"{kernel.library} was built without a CUDA kernel for it"


def snake_case(name: str) -> str:
    """GroupNorm -> group_norm."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def _direct(op: Op):
    def fn(*inputs, out=None, stream=None, **attrs):
        return call(op, *inputs, out=out, stream=stream, **attrs)

    fn.__name__ = fn.__qualname__ = snake_case(op.name)
    sig = ", ".join([i.name + ("=None" if i.optional else "") for i in op.inputs])
    kw = ", ".join(f"{a.name}={a.default!r}" if not a.required else a.name for a in op.attrs)
    fn.__doc__ = f"{fn.__name__}({sig}, *, {kw + ', ' if kw else ''}out=None, stream=None)\n\n{op.doc}"
    return fn


def _builtins():
    from .ops import ALL

    return {snake_case(op.name): _direct(op) for op in ALL if op.native is not None}


_BUILTINS = _builtins()
globals().update(_BUILTINS)
__all__ = ["call", *_BUILTINS]
