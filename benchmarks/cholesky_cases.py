"""The cholesky cases: torch.linalg.cholesky of symmetric positive-definite float32 matrices,
batched small (robotics, vision), mid and single large: ours (ORT session) against torch (LAPACK /
MKL) and numpy.linalg.cholesky; ours called directly (info). Case shape: (batch, n)."""
from __future__ import annotations

import numpy as np

from . import _common as C

GROUP = "cholesky"
IMPLS = ("ours", "torch", "numpy_cholesky", "ours_direct")
LABELS = {"numpy_cholesky": "numpy.linalg.cholesky"}
INFO = {"ours_direct"}
FULL = [(65536, 3), (65536, 4), (16384, 8), (256, 64), (16, 256), (1, 512), (1, 1024)]
QUICK = [(256, 3), (256, 4), (64, 8), (4, 64), (2, 32), (1, 48), (1, 64)]


def cases(quick: bool) -> list:
    goal = (C.Goal("torch", 1.0, "ours / torch.linalg.cholesky <= 1.0"),)
    return [C.Case(GROUP, bn, "float32", goals=goal) for bn in (QUICK if quick else FULL)]


def inputs(case) -> np.ndarray:
    b, n = case.shape
    rng = np.random.default_rng(4)
    x = rng.standard_normal((b, n, n)).astype(np.float32)
    a = x @ x.transpose(0, 2, 1) / n + np.eye(n, dtype=np.float32)
    return a[0] if b == 1 else a


def reference(case) -> np.ndarray:
    return np.linalg.cholesky(inputs(case).astype(np.float64))


def make_impl(case, key: str, label: str):
    a = inputs(case)
    if key == "ours":
        import ortcustom
        from ortcustom.ops import Cholesky
        from ortcustom.testing import make_model

        dom = ortcustom.Domain("ortcustom").add(Cholesky)
        sess = C._session(make_model(Cholesky, dom, {"A": (a.dtype, a.shape)}).SerializeToString(),
                          ortcustom.session_options(dom))
        return C.Impl(key, label, lambda: sess.run(None, {"A": a})[0], keep=(sess,))
    if key == "ours_direct":
        from ortcustom import kernels

        out = np.empty_like(a)
        return C.Impl(key, label, lambda: kernels.cholesky(a, out=out), info=True)
    if key == "torch":
        import torch

        t = torch.from_numpy(a)
        return C.Impl(key, label, lambda: torch.linalg.cholesky(t).numpy())
    if key == "numpy_cholesky":
        return C.Impl(key, label, lambda: np.linalg.cholesky(a))
    raise ValueError(f"no implementation {key!r} for {GROUP}")
