"""SearchSorted: torch.searchsorted, the insertion points of values into sorted sequences."""
import numpy as np

from ..registry import Attr, Input, Op, Output


def _side(v):
    if v not in ("", "left", "right"):
        raise ValueError(f"side can only be 'left' or 'right' (or '': from `right`), got {v!r}")


def _out_int32(v):
    if v:
        raise ValueError("out_int32=True is not supported: SearchSorted returns int64 (ONNX's index type); "
                         "cast the result (.to(torch.int32))")


def _reference(sorted_sequence, values, sorter=None, *, right=0, side="", out_int32=0):
    """The bisection torch runs (also for unsorted input and NaNs): the first index i with
    s[i] >= v (left) or s[i] > v (right), searching [0, n) by halving."""
    s, v = np.asarray(sorted_sequence), np.asarray(values)
    if s.dtype == np.float16:
        s, v = s.astype(np.float32), v.astype(np.float32)
    upper = side == "right" if side else bool(right)
    n = s.shape[-1]
    if n == 0 or v.size == 0:
        return np.zeros(v.shape, np.int64)
    rows = s.reshape(-1, n)
    if sorter is not None:
        rows = np.take_along_axis(rows, np.asarray(sorter).reshape(-1, n), axis=-1)
    flat = v.reshape(1, -1) if s.ndim == 1 else v.reshape(rows.shape[0], -1)
    start = np.zeros(flat.shape, np.int64)
    length = np.full(flat.shape, n, np.int64)
    r = np.arange(flat.shape[0])[:, None]
    with np.errstate(invalid="ignore"):
        while (length > 0).any():
            half = length // 2
            mid = np.minimum(start + half, n - 1)
            bound = rows[r, mid]
            right_of = ~(bound > flat) if upper else ~(bound >= flat)
            right_of &= length > 0
            start = np.where(right_of, start + half + 1, start)
            length = np.where(right_of, length - half - 1, half)
    return start.reshape(v.shape)


SearchSorted = Op(
    "SearchSorted",
    inputs=[Input("sorted_sequence", "T"), Input("values", "T"), Input("sorter", "int64", optional=True)],
    outputs=[Output("Y", "int64", shape="values")],
    types={"T": ("float", "double", "float16", "int8", "uint8", "int16", "int32", "int64")},
    attrs=[Attr("right", "int", default=0, choices=(0, 1),
                doc="1: the last insertion point (s[i-1] <= v < s[i]); 0: the first (s[i-1] < v <= s[i])"),
           Attr("side", "string", default="", check=_side,
                doc="'left' or 'right', as torch's side (overrides right; 'left' with right=1 is an error); "
                    "'': from right"),
           Attr("out_int32", "int", default=0, check=_out_int32,
                doc="torch's out_int32; only 0 (the output is int64)")],
    native="searchsorted",
    reference=_reference,
    torch="ortcustom::searchsorted",  # as torch.searchsorted(sorted_sequence, input, *, out_int32, right, side, sorter)
    torch_args=("sorted_sequence", "input=values", "out_int32", "right", "side", "sorter"),
    doc="Y[..., j] = the index where values[..., j] goes in sorted_sequence[..., :] (the same row of a batched "
        "sequence, whose leading dims equal values'; a 1-D sequence serves every value), as torch.searchsorted: "
        "the first i with s[i] >= v (right: s[i] > v), by bisection, so a NaN value goes last. sorter: the "
        "int64 indices that sort each row (as argsort gives them), each in [0, N).",
)
