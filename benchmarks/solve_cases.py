"""The solve and slogdet cases: torch.linalg.solve (one right-hand side vector per matrix) and
torch.linalg.slogdet of general float32 matrices (row swaps needed), batched small (robotics,
vision), mid and single large (also float64): ours (ORT session) against torch (LAPACK / MKL) and
numpy.linalg; ours called directly (info). Case shape: (batch, n)."""
from __future__ import annotations

import numpy as np

from . import _common as C

GROUPS = ("solve", "slogdet")
IMPLS = ("ours", "torch", "numpy", "ours_direct")
LABELS = {"numpy": "numpy.linalg"}
INFO = {"ours_direct"}
FULL = [(65536, 3), (65536, 4), (16384, 8), (256, 64), (16, 256), (1, 512), (1, 1024)]
QUICK = [(256, 3), (256, 4), (64, 8), (4, 64), (2, 32), (1, 48), (1, 64)]
FULL_F64 = [(1, 512), (1, 1024)]  # the single large ones in double too (the LU's product runs at half the lanes)


def cases(quick: bool) -> list:
    out = []
    for group in GROUPS:
        goal = (C.Goal("torch", 1.0, f"ours / torch.linalg.{group} <= 1.0"),)
        out += [C.Case(group, bn, "float32", goals=goal) for bn in (QUICK if quick else FULL)]
        out += [C.Case(group, bn, "float64", goals=goal) for bn in ([] if quick else FULL_F64)]
    return out


def inputs(case) -> tuple[np.ndarray, np.ndarray]:
    b, n = case.shape
    rng = np.random.default_rng(5)
    # well conditioned (a random matrix plus n I), rows reversed: partial pivoting must swap rows.
    # (Plain random matrices make some of 65536 nearly singular: there float32 log|det| is off by
    # more than the checks' tolerance for every implementation, torch's included.)
    dt = np.dtype(case.dtype)
    a = (rng.standard_normal((b, n, n)).astype(dt) + dt.type(n) * np.eye(n, dtype=dt))[..., ::-1, :]
    a = np.ascontiguousarray(a)
    v = rng.standard_normal((b, n)).astype(dt)
    return (a[0], v[0]) if b == 1 else (a, v)


def reference(case) -> np.ndarray:
    a, v = (x.astype(np.float64) for x in inputs(case))
    if case.group == "solve":
        return np.linalg.solve(a, v[..., None])[..., 0]
    return np.linalg.slogdet(a)[1]


def make_impl(case, key: str, label: str):
    a, v = inputs(case)
    solve = case.group == "solve"
    if key == "ours":
        import ortcustom
        from ortcustom.ops import Slogdet, Solve
        from ortcustom.testing import make_model

        op = Solve if solve else Slogdet
        dom = ortcustom.Domain("ortcustom").add(op)
        feed = {"A": a, "B": v} if solve else {"A": a}
        sess = C._session(make_model(op, dom, {k: (x.dtype, x.shape) for k, x in feed.items()}).SerializeToString(),
                          ortcustom.session_options(dom))
        return C.Impl(key, label, lambda: sess.run(None, feed)[0 if solve else 1], keep=(sess,))
    if key == "ours_direct":
        from ortcustom import kernels

        fn = (lambda: kernels.solve(a, v)) if solve else (lambda: kernels.slogdet(a)[1])
        return C.Impl(key, label, fn, info=True)
    if key == "torch":
        import torch

        ta, tv = torch.from_numpy(a), torch.from_numpy(v)
        fn = (lambda: torch.linalg.solve(ta, tv).numpy()) if solve else (lambda: torch.linalg.slogdet(ta)[1].numpy())
        if a.ndim == 3 and a.shape[-1] >= 128:  # torch 2.13 on 2 threads: batches of large ones fail or hang
            why = C.torch_linalg_fails(*(("solve", a, v) if solve else ("slogdet", a)))
            if why:
                raise C.Unavailable(f"torch fails here: {why}")
        try:
            fn()
        except RuntimeError as e:
            raise C.Unavailable(f"torch fails here: {str(e).splitlines()[0][:100]}") from None
        return C.Impl(key, label, fn)
    if key == "numpy":
        fn = (lambda: np.linalg.solve(a, v[..., None])[..., 0]) if solve else (lambda: np.linalg.slogdet(a)[1])
        return C.Impl(key, label, fn)
    raise ValueError(f"no implementation {key!r} for {case.group}")
