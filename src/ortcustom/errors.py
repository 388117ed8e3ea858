"""Words for errors that carry a user's exception (a Python kernel's, a shape rule's, a check's)."""
from __future__ import annotations


def exception_text(e: BaseException) -> str:
    """"TypeName: message" of `e`; where making its message fails too (a broken __str__), says so
    rather than failing again."""
    name = type(e).__name__
    try:
        msg = str(e)
    except BaseException as inner:  # noqa: BLE001  whatever __str__ raises
        return f"{name} (its message could not be made: its __str__ raised {type(inner).__name__})"
    return f"{name}: {msg}" if msg else name
