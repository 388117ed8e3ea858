"""The svd and svdvals cases: torch.linalg.svd (U, S and Vh) and torch.linalg.svdvals of random float32
square matrices, batched small (robotics, vision), mid and single large: ours (ORT session) against torch
(LAPACK / MKL gesdd) and numpy; ours called directly (info). Case shape: (batch, n), or (batch, m, n) for
svdvals of a tall matrix (whose values come from its R, as gesdd's: it was 2.8x torch's time). The singular vectors
are unique only up to sign: each implementation's timed call forms all it is asked for, and the check
compares S (the tests check the vectors)."""
from __future__ import annotations

import numpy as np

from . import _common as C

GROUPS = ("svd", "svdvals")
IMPLS = ("ours", "torch", "numpy_svd", "ours_direct")
LABELS = {"numpy_svd": "numpy.linalg.svd"}
INFO = {"ours_direct"}
FULL = [(65536, 3), (65536, 4), (16384, 8), (256, 64), (16, 256), (1, 512), (1, 1024)]
QUICK = [(256, 3), (256, 4), (64, 8), (4, 64), (2, 32), (1, 48), (1, 64)]
TALL = {"svdvals": [(1, 4000, 200)]}  # (svd's full U would be 4000 x 4000)


def cases(quick: bool) -> list:
    out = []
    for group in GROUPS:
        goal = (C.Goal("torch", 1.0, f"ours / torch.linalg.{group} <= 1.0"),)
        out += [C.Case(group, bn, "float32", goals=goal) for bn in (QUICK if quick else FULL + TALL.get(group, []))]
    return out


def inputs(case) -> np.ndarray:
    b, m, n = case.shape if len(case.shape) == 3 else (*case.shape, case.shape[-1])
    a = np.random.default_rng(5).standard_normal((b, m, n)).astype(np.float32)
    return a[0] if b == 1 else a


def reference(case) -> np.ndarray:
    return np.linalg.svd(inputs(case).astype(np.float64), compute_uv=False)


def make_impl(case, key: str, label: str):
    a = inputs(case)
    vectors = case.group == "svd"
    if key == "ours":
        import ortcustom
        from ortcustom.ops import Svd, Svdvals
        from ortcustom.testing import make_model

        op = Svd if vectors else Svdvals
        dom = ortcustom.Domain("ortcustom").add(op)
        sess = C._session(make_model(op, dom, {"A": (a.dtype, a.shape)}).SerializeToString(),
                          ortcustom.session_options(dom))
        return C.Impl(key, label, lambda: sess.run(None, {"A": a})[1 if vectors else 0], keep=(sess,))
    if key == "ours_direct":
        from ortcustom import kernels

        if vectors:
            return C.Impl(key, label, lambda: kernels.svd(a)[1], info=True)
        return C.Impl(key, label, lambda: kernels.svdvals(a), info=True)
    if key == "torch":
        import torch

        t = torch.from_numpy(a)
        if vectors:
            return C.Impl(key, label, lambda: torch.linalg.svd(t)[1].numpy())
        return C.Impl(key, label, lambda: torch.linalg.svdvals(t).numpy())
    if key == "numpy_svd":
        if vectors:
            return C.Impl(key, label, lambda: np.linalg.svd(a)[1])
        return C.Impl(key, label, lambda: np.linalg.svd(a, compute_uv=False))
    raise ValueError(f"no implementation {key!r} for {case.group}")
