"""The qr cases: torch.linalg.qr (Q and R, mode 'reduced') of random float32 square matrices, batched small
(robotics, vision), mid and single large: ours (ORT session) against torch (LAPACK / MKL geqrf + orgqr) and
numpy.linalg.qr; ours called directly (info). Case shape: (batch, n). All three follow LAPACK's sign
conventions, so the check compares R itself with numpy's in float64 (the tests check Q too)."""
from __future__ import annotations

import numpy as np

from . import _common as C

GROUP = "qr"
IMPLS = ("ours", "torch", "numpy_qr", "ours_direct")
LABELS = {"numpy_qr": "numpy.linalg.qr"}
INFO = {"ours_direct"}
FULL = [(65536, 3), (65536, 4), (16384, 8), (256, 64), (16, 256), (1, 512), (1, 1024)]
QUICK = [(256, 3), (256, 4), (64, 8), (4, 64), (2, 32), (1, 48), (1, 64)]


def cases(quick: bool) -> list:
    goal = (C.Goal("torch", 1.0, "ours / torch.linalg.qr <= 1.0"),)
    return [C.Case(GROUP, bn, "float32", goals=goal) for bn in (QUICK if quick else FULL)]


def inputs(case) -> np.ndarray:
    b, n = case.shape
    a = np.random.default_rng(5).standard_normal((b, n, n)).astype(np.float32)
    return a[0] if b == 1 else a


def reference(case) -> np.ndarray:
    return np.linalg.qr(inputs(case).astype(np.float64))[1]


def make_impl(case, key: str, label: str):
    a = inputs(case)
    if key == "ours":
        import ortcustom
        from ortcustom.ops import Qr
        from ortcustom.testing import make_model

        dom = ortcustom.Domain("ortcustom").add(Qr)
        sess = C._session(make_model(Qr, dom, {"A": (a.dtype, a.shape)}).SerializeToString(),
                          ortcustom.session_options(dom))
        return C.Impl(key, label, lambda: sess.run(None, {"A": a})[1], keep=(sess,))
    if key == "ours_direct":
        from ortcustom import kernels

        return C.Impl(key, label, lambda: kernels.qr(a)[1], info=True)
    if key == "torch":
        import torch

        t = torch.from_numpy(a)
        return C.Impl(key, label, lambda: torch.linalg.qr(t)[1].numpy())
    if key == "numpy_qr":
        return C.Impl(key, label, lambda: np.linalg.qr(a)[1])
    raise ValueError(f"no implementation {key!r} for {case.group}")
