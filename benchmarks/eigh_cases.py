"""The eigh and eigvalsh cases: torch.linalg.eigh (eigenvalues and eigenvectors) and torch.linalg.eigvalsh of
random symmetric float32 matrices, batched small (robotics, vision: 3x3 inertia/covariance, 4x4, 8x8), mid and
single large: ours (ORT session) against torch (LAPACK / MKL syevd) and numpy; ours called directly (info).
Case shape: (batch, n). The eigenvectors are unique only up to sign: each implementation's timed call forms
all it is asked for, and the check compares the eigenvalues (the tests check the vectors)."""
from __future__ import annotations

import numpy as np

from . import _common as C

GROUPS = ("eigh", "eigvalsh")
IMPLS = ("ours", "torch", "numpy_eigh", "ours_direct")
LABELS = {"numpy_eigh": "numpy.linalg.eigh"}
INFO = {"ours_direct"}
FULL = [(65536, 3), (65536, 4), (16384, 8), (256, 48), (256, 64), (16, 256), (1, 512)]  # 48: below, the QL was 1.7x torch
QUICK = [(256, 3), (256, 4), (64, 8), (4, 64), (2, 32), (1, 48), (1, 64)]


def cases(quick: bool) -> list:
    out = []
    for group in GROUPS:
        goal = (C.Goal("torch", 1.0, f"ours / torch.linalg.{group} <= 1.0"),)
        out += [C.Case(group, bn, "float32", goals=goal) for bn in (QUICK if quick else FULL)]
    return out


def inputs(case) -> np.ndarray:
    b, n = case.shape
    a = np.random.default_rng(5).standard_normal((b, n, n)).astype(np.float32)
    a = (a + np.swapaxes(a, -1, -2)) / 2
    return a[0] if b == 1 else a


def reference(case) -> np.ndarray:
    return np.linalg.eigvalsh(inputs(case).astype(np.float64))


def make_impl(case, key: str, label: str):
    a = inputs(case)
    vectors = case.group == "eigh"
    if key == "ours":
        import ortcustom
        from ortcustom.ops import Eigh, Eigvalsh
        from ortcustom.testing import make_model

        op = Eigh if vectors else Eigvalsh
        dom = ortcustom.Domain("ortcustom").add(op)
        sess = C._session(make_model(op, dom, {"A": (a.dtype, a.shape)}).SerializeToString(),
                          ortcustom.session_options(dom))
        return C.Impl(key, label, lambda: sess.run(None, {"A": a})[0], keep=(sess,))
    if key == "ours_direct":
        from ortcustom import kernels

        if vectors:
            return C.Impl(key, label, lambda: kernels.eigh(a)[0], info=True)
        return C.Impl(key, label, lambda: kernels.eigvalsh(a), info=True)
    if key == "torch":
        import torch

        t = torch.from_numpy(a)
        if vectors:
            return C.Impl(key, label, lambda: torch.linalg.eigh(t)[0].numpy())
        return C.Impl(key, label, lambda: torch.linalg.eigvalsh(t).numpy())
    if key == "numpy_eigh":
        if vectors:
            return C.Impl(key, label, lambda: np.linalg.eigh(a)[0])
        return C.Impl(key, label, lambda: np.linalg.eigvalsh(a))
    raise ValueError(f"no implementation {key!r} for {case.group}")
