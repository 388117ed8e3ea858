"""Shared helpers for the tests: sessions of one-node models."""
import subprocess
import sys

import numpy as np
import onnxruntime as ort

import ortcustom
from ortcustom.testing import make_model

CPU = ["CPUExecutionProvider"]


def session(op, domain, inputs, *, attrs=None, outputs=None, so=None, **kw):
    """An InferenceSession (CPU) of a one-node model of `op` registered in `domain`."""
    model = make_model(op, domain, inputs, attrs=attrs, outputs=outputs, **kw)
    if so is None:
        so = ortcustom.session_options(domain)
    return ort.InferenceSession(model.SerializeToString(), so, providers=CPU)


def well_conditioned(rng, shape, dtype):
    n = shape[-1]
    return (rng.standard_normal(shape) + n * np.eye(n)).astype(dtype)


def run_python(code, env=None, timeout=120):
    """Runs `code` in a fresh interpreter (a crash there fails the calling test, not the run)."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, env=env)
