"""An attribute value checked against its declaration outside a session, with one error type for
every such place: ortcustom.export (both exporters) and the torch ops of ortcustom.torch_ops (eager
or traced). A session's check is ORT's (an error at session creation naming the node)."""
from __future__ import annotations

from .registry import Attr, normalize


class InvalidAttribute(ValueError):
    """An attribute value that the op's declaration refuses: not of the attribute's kind, out of its
    bounds, or refused by its Attr(check=...). A ValueError."""


def checked(a: Attr, value):
    """`value` as attribute `a`'s kind, as a node carries it (normalized; a bool is an int 0/1, as ONNX
    has no bool attributes), within its bounds and passed through `a.check`; raises InvalidAttribute
    with the reason otherwise."""
    if a.kind in ("int", "ints"):
        value = [int(v) if isinstance(v, bool) else v for v in value] if isinstance(value, (list, tuple)) \
            else int(value) if isinstance(value, bool) else value
    try:
        value = normalize(a, value)
        a.validate(value)
    except (TypeError, ValueError) as e:
        raise InvalidAttribute(str(e)) from None
    return value
