"""Op declarations and domains.

An op is declared once, as an `Op`: its inputs, outputs, type constraints, attributes, versions, the
rule for its output shapes, and its kernel (a native one compiled into the extension module, or a
Python function). Everything ONNX Runtime needs (the OrtCustomOp structs, type checks, attribute
parsing, shape inference) and the ONNX schema and reference implementation derive from it.
"""
from __future__ import annotations

import dataclasses
import inspect
import itertools
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as _np

from .types import ATTR_KINDS, TYPE_NAMES, canonical, element_type
from .signatures import check_sibling

REQUIRED = object()  # Attr default meaning "the model must set it"


@dataclass(frozen=True)
class NativeKernel:
    """A kernel found in a library (ortcustom.native finds it): the addresses of its oc_kernel per
    device (0: none), and what its CPU (or else CUDA) oc_kernel says of itself. A value of
    `Op(native=...)`, so declared here, below the runtime that finds it."""

    name: str
    library: str
    cpu: int
    cuda: int
    info: dict

    def __repr__(self):
        devices = [d for d in ("cpu", "cuda") if getattr(self, d)]
        return f"NativeKernel({self.name!r} in {self.library}, devices={devices})"
# Type bindings an op may have (the product of its constraints' type counts): every one is a row of
# the op's tables (generated C, the Python module's); 18 ** 4 (any of the 18 types on four
# independent inputs) is within, ORT is given a few ops whatever the count (glue/ort_op.cpp)
MAX_TYPE_BINDINGS = 200_000


@dataclass(frozen=True)
class Input:
    """An input: `type` is a type-constraint name of the op or an element type name (ONNX's "float"
    or NumPy's "float32": the op keeps ONNX's). A variadic one with `homogeneous=False` takes tensors
    of different types, each any of its constraint's (it binds no constraint); the kernel sees each
    tensor's own type. A `constant` one is read once, when the kernel is created (a vocabulary, a
    table): the model must give it as an initializer (anything else is refused at session creation,
    naming the op, the node and the input); the kernel's create step gets its data and shape, and
    each run gets it again like any input."""

    name: str
    type: str
    optional: bool = False
    variadic: bool = False
    min_arity: int = 1
    homogeneous: bool = True
    cpu: bool = False  # stays in host memory even when the op runs on a GPU provider
    constant: bool = False  # an initializer, read at kernel creation

    def __post_init__(self):
        check_name("input", self.name)
        if self.constant and self.variadic:
            raise ValueError(f"input {self.name!r}: a variadic input cannot be constant (ORT reads one initializer "
                             f"per declared input at kernel creation)")


@dataclass(frozen=True)
class Output:
    """An output. `shape`: None (not inferred), an input's name (same shape), or a callable
    `f(shapes, attrs) -> tuple | None` where `shapes` maps input names to tuples of dims (int, str
    for a symbolic dim, None for an unknown one) or None (unknown rank, or input absent); it returns
    such a tuple or None. A rule that raises or returns anything else is an error naming the op, and
    the kernel's outputs are held to the dims a rule (or `shape="X"`) gives, at each run."""

    name: str
    type: str
    shape: str | Callable | None = None
    optional: bool = False
    variadic: bool = False
    min_arity: int = 1
    homogeneous: bool = True

    def __post_init__(self):
        check_name("output", self.name)
        if not self.homogeneous:  # its tensors' types would be the node's, which no kernel is told
            raise ValueError(f"output {self.name!r}: homogeneous=False (tensors of different element types) is for "
                             f"variadic inputs only: an output's element type comes from the node's type binding")
        if callable(self.shape):
            try:
                sig = inspect.signature(self.shape)
            except (TypeError, ValueError):  # some builtins have none: their errors come when they run
                return
            try:
                sig.bind(None, None)
            except TypeError:
                raise ValueError(f"output {self.name!r}: a shape rule is called as f(shapes, attrs); "
                                 f"{getattr(self.shape, '__name__', 'this one')}{sig} cannot be") from None
        elif self.shape is not None and not isinstance(self.shape, str):
            raise ValueError(f"output {self.name!r}: shape is None, an input's name or a function "
                             f"f(shapes, attrs), got {self.shape!r}")


@dataclass(frozen=True)
class Attr:
    """An attribute. What a value must be: `min`/`max` (int and float attributes) and `choices`
    (int) are checked everywhere the op runs, its plain library included; `check(value)` (raises
    ValueError with a message) is Python's, for what bounds cannot say. A string attribute's value
    is bytes in ONNX: kernels get it as `str` (UTF-8 text; other bytes refused, naming the
    attribute), or, with `bytes=True`, as `bytes`, exactly as stored (a serialized model, a blob)."""

    name: str
    kind: str
    default: Any = REQUIRED
    check: Callable[[Any], None] | None = None
    doc: str = ""
    min: float | None = None
    max: float | None = None
    choices: Sequence[int] | None = None
    bytes: bool = False  # a string attribute's value as bytes, not text

    def __post_init__(self):
        check_name("attribute", self.name)
        if self.bytes is not False and (self.bytes is not True or self.kind not in ("string", "strings")):
            raise ValueError(f"attribute {self.name!r}: bytes=True is for string and strings attributes "
                             f"(kind {self.kind!r}, bytes={self.bytes!r})")
        check_text(f"attribute {self.name!r}: doc", self.doc)
        if self.kind == "tensor" and not self.required:
            raise ValueError(f"attribute {self.name!r}: a tensor attribute has no default (declare it without one)")
        if self.kind == "string" and isinstance(self.default, str):
            check_text(f"attribute {self.name!r}: default", self.default)
        if self.choices is not None:
            choices = tuple(self.choices)
            if not choices:
                raise ValueError(f"attribute {self.name!r}: choices=() allows no value; give at least one "
                                 f"(or choices=None for any)")
            for c in choices:
                _int64(self.name, "choice", c)
            object.__setattr__(self, "choices", choices)
        for which in ("min", "max"):
            v = getattr(self, which)
            if v is None:
                continue
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v:
                raise ValueError(f"attribute {self.name!r}: {which} must be a number, got {v!r}")
            if self.kind == "int":  # compared exactly, as int64, wherever the op runs
                object.__setattr__(self, which, _int64(self.name, which, v))
            elif self.kind == "float":
                object.__setattr__(self, which, float(v))
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"attribute {self.name!r}: min {self.min!r} > max {self.max!r} allows no value")

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def validate(self, value) -> None:
        """ValueError saying why `value` (normalized) is not allowed: the bounds (worded as the
        glue words them), then `check`."""
        if self.choices is not None and value not in self.choices:
            raise ValueError(f"must be one of {', '.join(map(str, self.choices))}")
        if self.min is not None and not value >= self.min:
            raise ValueError(f"must be >= {_num(self.min)}")
        if self.max is not None and not value <= self.max:
            raise ValueError(f"must be <= {_num(self.max)}")
        if self.check is not None:
            self.check(value)


def _num(v) -> str:
    # as the glue words them: an int attribute's bound (an int) exactly, a float's as C's %g
    return str(v) if isinstance(v, int) else f"{v:g}"


def check_name(what: str, name) -> None:
    """A name as C and ONNX take it: a non-empty str, no NUL, encodable as UTF-8 (ValueError)."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"{'an' if what[0] in 'aeiou' else 'a'} {what} needs a non-empty name (a str), got {name!r}")
    if "\0" in name:
        raise ValueError(f"{what} name {name!r} holds a NUL character")
    check_text(f"{what} name", name)


def check_text(what: str, text: str) -> None:
    """ValueError unless `text` (a name, a doc, a string attribute's value) encodes as UTF-8, as C and
    ONNX carry it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{what} {text!r} is not text UTF-8 can encode (a lone surrogate)") from None


def _int64(attr: str, what: str, v) -> int:
    """v as an int within int64 (an int, or a float with an integral value); ValueError else."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, float) and not v.is_integer()):
        raise ValueError(f"attribute {attr!r}: {what} {v!r} is not an integer")
    if not -2**63 <= v < 2**63:
        raise ValueError(f"attribute {attr!r}: {what} {v!r} is outside int64 [-2**63, 2**63 - 1]")
    return int(v)


class InvalidAttribute(ValueError):
    """An attribute value that the op's declaration refuses: not of the attribute's kind, out of its
    bounds, or refused by its Attr(check=...). A ValueError."""


def invalid(a: Attr, value, why) -> str:
    """The one wording of a refused value, on every path: "attribute epsilon=-1.0 is invalid: must be
    >= 0" (the glue's, for sessions and plain libraries, is the same: glue/attrs.cpp)."""
    return f"attribute {a.name}={ATTR_KINDS[a.kind].text(value)} is invalid: {why}"


def checked(a: Attr, value):
    """`value` as a node carries it (normalized), within its bounds and passed through `a.check`:
    the one check of a value outside a session (direct calls, torch ops, export). TypeError when it
    is not of the attribute's kind, InvalidAttribute (worded by `invalid`) when it is refused."""
    v = normalize(a, value)
    try:
        a.validate(v)
    except ValueError as e:
        raise InvalidAttribute(invalid(a, v, e)) from None
    return v


def _fail(op: str, msg: str):
    raise ValueError(f"op {op!r}: {msg}")


@dataclass(frozen=True, eq=False)
class Op:
    """One op declaration. Give `native` (a compiled kernel, see ortcustom/kernel.h: "name" for
    one of ortcustom's, "module:name" for one in your own library, or `load_kernels(path)[name]`)
    or `compute` (a Python function `compute(*inputs, **attrs) -> output or tuple of outputs`).
    A native kernel is found, and checked against the declaration, on first use (`op.kernel`).

    `torch`: the name of a `torch.library` op ("ns::name") that `ortcustom.torch_ops.register`
    makes from the declaration, and that exports to this op; `torch_args`: the op's inputs and
    attributes in the torch op's argument order (default: inputs, then attributes).

    Python kernels get inputs as read-only NumPy views of ORT's memory (CuPy arrays on ORT's
    stream for `cuda=True` ops run by the CUDA provider), valid during the call only. A function
    with a keyword-only `out` parameter gets ORT's output buffers to fill (`out=(y0, ...)`) when
    every output has `shape="<input name>"` (it returns None, or its outputs, copied in; one that
    assigns to `out` must return them); otherwise it returns its outputs, copied once."""

    name: str
    inputs: Sequence[Input]
    outputs: Sequence[Output]
    types: Mapping[str, Sequence[str]] = field(default_factory=dict)
    attrs: Sequence[Attr] = ()
    native: Any = None
    compute: Callable | None = None
    reference: Callable | None = None
    since: int = 1
    until: int | None = None
    cuda: bool = False
    doc: str = ""
    torch: str | None = None
    torch_args: Sequence[str] | None = None

    def __post_init__(self):
        n = self.name  # ONNX takes any op_type ("String-Split", "my.op"): it is never an identifier here
        check_name("op", n)
        try:
            check_text("doc", self.doc)
        except ValueError as e:
            _fail(n, str(e))
        object.__setattr__(self, "inputs", tuple(self.inputs))
        object.__setattr__(self, "outputs", tuple(self.outputs))
        object.__setattr__(self, "attrs", tuple(self.attrs))
        object.__setattr__(self, "types", {k: tuple(canonical(t) for t in v) for k, v in dict(self.types).items()})
        if (self.native is None) == (self.compute is None):
            _fail(n, "give exactly one of native= (a compiled kernel) or compute= (a Python function)")
        if self.cuda and self.compute is None:
            _fail(n, "cuda=True is for Python kernels (compute=): the function then also gets CuPy "
                     "arrays on ORT's CUDA stream when the node runs on CUDAExecutionProvider")
        if not self.outputs:
            _fail(n, "an op needs at least one output")
        for c, allowed in self.types.items():
            try:
                check_name("type constraint", c)
            except ValueError as e:
                _fail(n, str(e))
            if not allowed:
                _fail(n, f"type constraint {c!r} allows no type")
            for t in allowed:
                if element_type(t) is None:
                    _fail(n, f"type constraint {c!r}: unknown element type {t!r}; known: {', '.join(TYPE_NAMES)}")
        bindings = math.prod(len(v) for v in self.types.values())
        if bindings > MAX_TYPE_BINDINGS:
            counts = " x ".join(f"{len(v)} ({k})" for k, v in self.types.items())
            _fail(n, f"its type constraints make {bindings} type bindings ({counts}), above ortcustom's limit of "
                     f"{MAX_TYPE_BINDINGS} (each is a row of the op's tables): give inputs that share a type one "
                     f"constraint, or allow fewer types")
        for group in ("inputs", "outputs"):  # element types by ONNX's name (a constraint keeps its own)
            object.__setattr__(self, group, tuple(
                io if io.type in self.types else dataclasses.replace(io, type=canonical(io.type))
                for io in getattr(self, group)))
        names = [io.name for io in self.inputs + self.outputs]
        if len(set(names)) != len(names):
            _fail(n, f"input and output names must be unique: {names}")
        for group in (self.inputs, self.outputs):
            for i, io in enumerate(group):
                if io.type not in self.types and element_type(io.type) is None:
                    _fail(n, f"{io.name!r} has type {io.type!r}, neither a type constraint {sorted(self.types)} "
                             f"nor an element type")
                if io.variadic and i != len(group) - 1:
                    _fail(n, f"only the last input or output may be variadic, not {io.name!r}")
                if io.variadic and io.optional:
                    _fail(n, f"{io.name!r} cannot be both variadic and optional")
        in_names = {i.name for i in self.inputs}
        for o in self.outputs:
            if isinstance(o.shape, str) and o.shape not in in_names:
                _fail(n, f"output {o.name!r} takes its shape from {o.shape!r}, which is not an input")
        attr_names = [a.name for a in self.attrs]
        if len(set(attr_names)) != len(attr_names):
            _fail(n, f"attribute names must be unique: {attr_names}")
        for a in self.attrs:
            if a.kind not in ATTR_KINDS:
                _fail(n, f"attribute {a.name!r} has kind {a.kind!r}; kinds: {tuple(ATTR_KINDS)}")
            if (a.min is not None or a.max is not None or a.choices is not None) and not ATTR_KINDS[a.kind].bounded:
                _fail(n, f"attribute {a.name!r}: min, max and choices are for int and float attributes")
            if a.choices is not None and a.kind != "int":
                _fail(n, f"attribute {a.name!r}: choices are for int attributes")
            if not a.required:
                try:
                    a.validate(normalize(a, a.default))
                except (TypeError, ValueError) as e:
                    _fail(n, f"default of attribute {a.name!r} is invalid: {e}")
        if not isinstance(self.since, int) or self.since < 1:
            _fail(n, f"since must be an int >= 1, got {self.since!r}")
        if self.until is not None and (not isinstance(self.until, int) or self.until < self.since):
            _fail(n, f"until must be an int >= since ({self.since}), got {self.until!r}")
        if self.torch_args is not None:
            object.__setattr__(self, "torch_args", tuple(self.torch_args))
            known = [i.name for i in self.inputs] + [a.name for a in self.attrs]
            for a in self.torch_args:  # "decl_name" or "torch_name=decl_name"
                if (a.partition("=")[2] or a) not in known:
                    _fail(n, f"torch_args names {a!r}, which is neither an input nor an attribute: {known}")
        if self.torch is not None and (not isinstance(self.torch, str) or "::" not in self.torch):
            _fail(n, f"torch must be a torch op name 'namespace::name', got {self.torch!r}")
        if self.torch is not None:
            for a in self.attrs:
                if a.kind == "tensor":
                    _fail(n, f"torch={self.torch!r}: attribute {a.name!r} is a tensor, which a torch op cannot take "
                             f"as an attribute (declare the op without torch=)")
            for io in (*self.inputs, *self.outputs):
                if any(element_type(t).torch is None for t in self.types.get(io.type, (io.type,))):
                    _fail(n, f"torch={self.torch!r}: {io.name} may be a string tensor, which torch has no "
                             f"type for (declare the op without torch=)")
        if self.native is not None and not isinstance(self.native, (str, NativeKernel)):
            _fail(n, f"native= takes a kernel name ('name' or 'module:name') or a NativeKernel from "
                     f"ortcustom.load_kernels(path)[name], got {self.native!r}")

    @property
    def kernel(self):
        """The native kernel (ortcustom.native.NativeKernel; None for a Python op), found and checked
        against this declaration on first use: declarations stay pure data."""
        from .native import bind

        return bind(self)

    def __repr__(self):
        kernel = f"native={self.native!r}" if self.native is not None else "compute=<python>"
        return f"Op({self.name!r}, {kernel}, since={self.since}, until={self.until})"

    def type_bindings(self) -> list[dict[str, str]]:
        """Every assignment of an element type to each type constraint, in declaration order."""
        keys = list(self.types)
        return [dict(zip(keys, combo)) for combo in itertools.product(*(self.types[k] for k in keys))]

    def accepted_types(self) -> str:
        """For error messages: 'X: T, Y: int64 with T in {float, double}'."""
        sig = ", ".join(f"{i.name}: {i.type}" for i in self.inputs)
        cons = "; ".join(f"{k} in {{{', '.join(v)}}}" for k, v in self.types.items())
        return f"({sig})" + (f" with {cons}" if cons else "")


def normalize(attr: Attr, value):
    """The attribute's value as a node carries it: int, float (rounded to float32, as ONNX stores
    it), str, or a tuple of int / float32-rounded floats; TypeError if it is of the wrong kind. The
    one normalization: defaults in sessions and schemas, direct calls, torch ops and export."""
    v = coerce_attr(attr, value)
    if attr.kind == "float":
        return float(_np.float32(v))
    if attr.kind == "floats":
        return tuple(float(f) for f in _np.asarray(v, _np.float32))
    return v


def coerce_attr(attr: Attr, value):
    """The attribute's value as Python (int, float, str, tuple of int/float); TypeError if wrong."""
    kind = ATTR_KINDS[attr.kind]
    if kind.name == "tensor":
        return _tensor(value)
    if not kind.is_list:
        return _scalar(kind.name, value, attr.bytes)
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise TypeError(f"expected a sequence of {kind.element.name}s, got {value!r}")
    return tuple(_scalar(kind.element.name, v, attr.bytes) for v in value)


def _tensor(value):
    """A tensor attribute's value: a C-contiguous array of an ONNX element type, at most 16 dims
    (text: an object array of str); TypeError otherwise."""
    from .types import name_of_dtype

    if isinstance(value, (str, bytes)) or value is None:
        raise TypeError(f"expected an array, got {value!r}")
    arr = _np.asarray(value)
    try:
        name = name_of_dtype(arr.dtype)
    except ValueError as e:
        raise TypeError(f"expected an array of an ONNX element type: {e}") from None
    if arr.ndim > 16:
        raise TypeError(f"expected at most 16 dims, got {arr.ndim}")
    if name == "string":
        arr = _np.array([v.decode("utf-8") if isinstance(v, bytes) else v for v in arr.reshape(-1)] or [],
                        dtype=object).reshape(arr.shape)
        bad = next((v for v in arr.reshape(-1) if not isinstance(v, str)), None)
        if bad is not None:
            raise TypeError(f"expected str elements in a string tensor, got {bad!r}")
    return _np.ascontiguousarray(arr)


class NotText(ValueError):
    """A string attribute's bytes that are not UTF-8 text, where the op asks for text."""


def text_of(value: bytes) -> str:
    """A string attribute's bytes as text; NotText (saying where, and how to take bytes) if they are
    not UTF-8."""
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError as e:
        raise NotText(f"value {value[:40]!r}{'...' if len(value) > 40 else ''} is not UTF-8 text "
                      f"(byte 0x{value[e.start]:02x} at offset {e.start}); declare the attribute "
                      f"with bytes=True to take bytes") from None


def _scalar(kind: str, value, raw: bool = False):
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"expected an int, got {value!r}")
        return int(value)
    if kind == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"expected a float, got {value!r}")
        return float(value)
    if isinstance(value, (bytearray, memoryview)):
        value = bytes(value)
    if raw:  # bytes kept exactly; text as its UTF-8
        if isinstance(value, str):
            check_text("the value", value)
            return value.encode("utf-8")
        if not isinstance(value, bytes):
            raise TypeError(f"expected bytes (or a str), got {value!r}")
        return value
    if isinstance(value, bytes):
        value = text_of(value)
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {value!r}")
    return value


class Domain:
    """A set of ops under one ONNX domain name. `add` returns the domain, so calls chain."""

    def __init__(self, name: str, version: int = 1):
        check_name("domain", name)
        if name in ("ai.onnx", "ai.onnx.ml"):
            raise ValueError(f"{name!r} is ONNX's own domain; custom ops need a domain of their own")
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise ValueError(f"domain version must be an int >= 1, got {version!r}")
        self.name = name
        self.version = version
        self.opset: int | None = None  # the opset the models import, where the user said so (at)
        self._ops: list[Op] = []
        self._registered = False  # SessionOptions hold its ops as they were then: add() refuses more

    @property
    def ops(self) -> tuple[Op, ...]:
        return tuple(self._ops)

    def add(self, *ops: Op) -> "Domain":
        for op in ops:
            if not isinstance(op, Op):
                raise TypeError(f"Domain({self.name!r}).add takes ortcustom.Op declarations, got {op!r}")
            if self._registered:
                raise ValueError(
                    f"domain {self.name!r} was registered already: the SessionOptions it went into hold the ops it "
                    f"had then, and {op.name!r} would not reach them. Add every op before registering, or add "
                    f"them to a new Domain({self.name!r})")
            for have in self._ops:
                if have is op:
                    raise ValueError(f"op {op.name!r} is already in domain {self.name!r}")
                if have.name != op.name or not _overlap(have, op):
                    continue
                if (have.since, have.until) != (op.since, op.until):
                    raise ValueError(
                        f"domain {self.name!r} already has an op {op.name!r} for versions "
                        f"{_span(have)}, which overlaps {_span(op)}: declarations of one name are versions "
                        f"(spans apart) or siblings, one per type signature (the same span)")
                why = check_sibling(have, op)
                if why:
                    raise ValueError(f"domain {self.name!r}: op {op.name!r} {_span(op)} cannot join the "
                                     f"declaration already there: {why}")
            self._ops.append(op)  # nothing global: onnx learns the schemas from ortcustom.schemas.register
        return self

    def registered_ops(self) -> tuple[Op, ...]:
        """Its ops, for a registration: from now on add() refuses more (they would silently be
        missing from the SessionOptions registered with it)."""
        self._registered = True
        return self.ops

    def declarations(self, name: str) -> tuple[Op, ...]:
        """Its ops named `name`, in the order added: one, or siblings (one per type signature, which
        `kernels.call` picks from by the inputs' types), or versions."""
        return tuple(op for op in self._ops if op.name == name)

    def at(self, version: int) -> "Domain":
        """A domain of the same name with the ops valid at opset `version` (one per name and
        signature)."""
        d = Domain(self.name, version)
        d.opset = version
        d._ops = [op for op in self._ops if op.since <= version and (op.until is None or version <= op.until)]
        return d

    def register(self, so):
        """Adds this domain to an existing onnxruntime.SessionOptions; returns it."""
        from .session import register

        return register(so, self)

    def __repr__(self):
        return f"Domain({self.name!r}, version={self.version}, ops={[o.name for o in self._ops]})"


def _span(op: Op) -> str:
    return f"[{op.since}, {op.until if op.until is not None else 'inf'}]"


def _overlap(a: Op, b: Op) -> bool:
    inf = float("inf")
    return a.since <= (b.until or inf) and b.since <= (a.until or inf)
