"""The solve_triangular cases: torch.linalg.solve_triangular(A, B, upper=False) with A lower
triangular float32 (n x n) and B of n x 4 columns (n x n for the single large ones), batched small,
mid and single large: ours (ORT session) against torch (LAPACK / MKL trsm); ours called directly
(info). Case shape: (batch, n)."""
from __future__ import annotations

import numpy as np

from . import _common as C

GROUP = "solve_triangular"
IMPLS = ("ours", "torch", "ours_direct")
LABELS: dict = {}
INFO = {"ours_direct"}
FULL = [(65536, 3), (65536, 4), (16384, 8), (256, 64), (16, 256), (1, 512), (1, 1024)]
QUICK = [(256, 3), (256, 4), (64, 8), (4, 64), (2, 32), (1, 48), (1, 64)]


def cases(quick: bool) -> list:
    goal = (C.Goal("torch", 1.0, "ours / torch.linalg.solve_triangular <= 1.0"),)
    return [C.Case(GROUP, bn, "float32", goals=goal) for bn in (QUICK if quick else FULL)]


def inputs(case):
    b, n = case.shape
    rng = np.random.default_rng(5)
    a = np.tril(rng.standard_normal((b, n, n)) / np.sqrt(n)) + 2 * np.eye(n)
    x = rng.standard_normal((b, n, n if b == 1 else 4))
    return a.astype(np.float32), x.astype(np.float32)


def reference(case) -> np.ndarray:
    a, b = (v.astype(np.float64) for v in inputs(case))
    return np.linalg.solve(a, b)


def make_impl(case, key: str, label: str):
    a, b = inputs(case)
    if key == "ours":
        import ortcustom
        from ortcustom.ops import SolveTriangular
        from ortcustom.testing import make_model

        dom = ortcustom.Domain("ortcustom").add(SolveTriangular)
        model = make_model(SolveTriangular, dom, {"A": (a.dtype, a.shape), "B": (b.dtype, b.shape)}, attrs={"upper": 0})
        sess = C._session(model.SerializeToString(), ortcustom.session_options(dom))
        return C.Impl(key, label, lambda: sess.run(None, {"A": a, "B": b})[0], keep=(sess,))
    if key == "ours_direct":
        from ortcustom import kernels

        out = np.empty_like(b)
        return C.Impl(key, label, lambda: kernels.solve_triangular(a, b, upper=0, out=out), info=True)
    if key == "torch":
        import torch

        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        return C.Impl(key, label, lambda: torch.linalg.solve_triangular(ta, tb, upper=False).numpy())
    raise ValueError(f"no implementation {key!r} for {GROUP}")
