"""The searchsorted cases: torch.searchsorted of 10^6 float32 values (quick: 10^4) into one sorted
1-D sequence of 10 to 10^6 boundaries: ours (ORT session) against torch, numpy.searchsorted, and
ours called directly (info). Case shape: (boundaries, values)."""
from __future__ import annotations

import numpy as np

from . import _common as C

GROUP = "searchsorted"
IMPLS = ("ours", "torch", "numpy_searchsorted", "ours_direct")
LABELS = {"numpy_searchsorted": "numpy.searchsorted"}
INFO = {"ours_direct"}


def cases(quick: bool) -> list:
    values = 10_000 if quick else 1_000_000
    goal = (C.Goal("torch", 1.0, "ours / torch.searchsorted <= 1.0"),)
    return [C.Case(GROUP, (n, values), "float32", goals=goal) for n in (10, 1000, 100_000, 1_000_000)]


def inputs(case):
    n, m = case.shape
    rng = np.random.default_rng(3)
    seq = np.sort(rng.standard_normal(n).astype(np.float32))
    return seq, rng.standard_normal(m).astype(np.float32) * 1.2


def reference(case) -> np.ndarray:
    seq, values = inputs(case)
    return np.searchsorted(seq, values, side="left")


def make_impl(case, key: str, label: str):
    seq, values = inputs(case)
    if key == "ours":
        import ortcustom
        from ortcustom.ops import SearchSorted
        from ortcustom.testing import make_model

        dom = ortcustom.Domain("ortcustom").add(SearchSorted)
        model = make_model(SearchSorted, dom, {"sorted_sequence": (seq.dtype, seq.shape),
                                               "values": (values.dtype, values.shape)})
        sess = C._session(model.SerializeToString(), ortcustom.session_options(dom))
        feeds = {"sorted_sequence": seq, "values": values}
        return C.Impl(key, label, lambda: sess.run(None, feeds)[0], keep=(sess,))
    if key == "ours_direct":
        from ortcustom import kernels

        out = np.empty(values.shape, np.int64)
        return C.Impl(key, label, lambda: kernels.search_sorted(seq, values, out=out), info=True)
    if key == "torch":
        import torch

        s, v = torch.from_numpy(seq), torch.from_numpy(values)
        return C.Impl(key, label, lambda: torch.searchsorted(s, v).numpy())
    if key == "numpy_searchsorted":
        return C.Impl(key, label, lambda: np.searchsorted(seq, values))
    raise ValueError(f"no implementation {key!r} for {GROUP}")
