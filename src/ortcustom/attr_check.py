"""An attribute value from PyTorch checked against its declaration (ortcustom.export, both
exporters, and the torch ops of ortcustom.torch_ops, eager or traced): registry.checked, with a
bool taken as the int 0/1 (ONNX has no bool attributes) and every refusal an InvalidAttribute.
A session's check is the glue's (an error at session creation naming the node), worded alike."""
from __future__ import annotations

from .registry import Attr, InvalidAttribute, checked as _checked
from .types import ATTR_KINDS

__all__ = ["InvalidAttribute", "checked"]


def checked(a: Attr, value):
    """`value` as attribute `a`'s kind, as a node carries it; InvalidAttribute with the reason otherwise."""
    if ATTR_KINDS[a.kind].element.name == "int":
        value = [int(v) if isinstance(v, bool) else v for v in value] if isinstance(value, (list, tuple)) \
            else int(value) if isinstance(value, bool) else value
    try:
        return _checked(a, value)
    except TypeError as e:
        raise InvalidAttribute(f"attribute {a.name}: {e}") from None
