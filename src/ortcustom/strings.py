"""String tensors as a native kernel reads them (kernel.h's oc_string): NumPy only."""
from __future__ import annotations

import numpy as np


def pack(arr):
    """`arr`'s elements (str, or bytes: the glue checks them as UTF-8) as (the bytes, each element
    followed by a NUL; an (n, 2) int64 array of oc_string rows, pointer and size, into them).
    TypeError or ValueError naming the element that is not text."""
    enc = []
    for j, v in enumerate(np.asarray(arr).reshape(-1)):
        if isinstance(v, str):
            try:
                enc.append(v.encode("utf-8"))
            except UnicodeEncodeError as e:  # a lone surrogate
                raise ValueError(f"element {j} cannot be UTF-8 ({e.reason})") from None
        elif isinstance(v, bytes):
            enc.append(v)
        else:
            raise TypeError(f"element {j} is {type(v).__name__}; a string tensor holds str")
    buf = np.frombuffer(b"\0".join(enc) + b"\0", np.uint8)
    rows = np.empty((len(enc), 2), np.int64)
    sizes = np.fromiter(map(len, enc), np.int64, len(enc))
    rows[:, 1] = sizes
    rows[:, 0] = buf.ctypes.data
    rows[1:, 0] += np.cumsum(sizes[:-1] + 1)
    return buf, rows
