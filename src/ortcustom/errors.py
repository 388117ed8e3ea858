"""Words for errors that carry a user's exception (a Python kernel's, a shape rule's, a check's)."""
from __future__ import annotations


def message_text(e: BaseException) -> str:
    """str(e); where making it fails too (a broken __str__), says so, naming e's type, rather than
    failing again."""
    try:
        return str(e)
    except BaseException as inner:  # noqa: BLE001  whatever __str__ raises
        return f"{type(e).__name__} (its message could not be made: its __str__ raised {type(inner).__name__})"


def exception_text(e: BaseException) -> str:
    """"TypeName: message" of `e` (message_text's words where its message cannot be made)."""
    try:
        msg = str(e)
    except BaseException:  # noqa: BLE001
        return message_text(e)
    return f"{type(e).__name__}: {msg}" if msg else type(e).__name__
