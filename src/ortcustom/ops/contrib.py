"""ORT's contrib ops GroupNorm and SkipGroupNorm (domain com.microsoft) on the CPU.

onnxruntime.transformers.optimizer fuses the group norms of Stable-Diffusion-style UNets and VAEs
into these ops, which ORT implements for CUDA, DirectML and WebGPU but not for the CPU. The
declarations follow ORT's published schema (since version 1); the kernels are CPU only:

    so = ortcustom.session_options(ortcustom.ops.contrib.domain())     # CPU sessions
    sess = ortcustom.ops.contrib.inference_session("unet.onnx", providers=[...])  # any machine

Registering these ops does not give ORT's CUDA provider kernels of ours, but it does change the
nodes' schema: ORT resolves every com.microsoft GroupNorm / SkipGroupNorm node against the schema
it builds for a custom op (type strings it names itself, none of them T), and its built-in CUDA
kernels, whose constraint is named T, then no longer match: session creation fails ("Failed to
find args for kernel type string 'T'"; seen on an H200 with ORT 1.31.1). `inference_session`
therefore tries ORT alone first and registers ours only when ORT has no kernel for the nodes
(NOT_IMPLEMENTED: no usable GPU).
"""
import numpy as np

from ..registry import Attr, Domain, Input, Op, Output

ATTRS = [
    Attr("activation", "int", choices=(0, 1), doc="0: none, 1: SiLU after the normalization"),
    Attr("channels_last", "int", default=1, doc="1 (or any nonzero): X is (N, H, W, C); 0: (N, C, H, W)"),
    Attr("epsilon", "float", default=1e-5, min=0),
    Attr("groups", "int", min=1, doc="groups of channels; divides C"),
]
TYPES = {"T": ("float", "float16"), "M": ("float", "float16")}  # M: gamma, beta, independent of T


def _normalize(s, gamma, beta, *, activation, channels_last, epsilon, groups):
    """GroupNorm of s (in float64) rounded to s's type."""
    if s.size == 0:
        return s.copy()
    x = s.astype(np.float64)
    if channels_last:
        x = np.moveaxis(x, 3, 1)
    n, c = x.shape[:2]
    g = x.reshape(n, groups, -1)
    y = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + epsilon)).reshape(x.shape)
    y = y * gamma.astype(np.float64).reshape(1, c, 1, 1) + beta.astype(np.float64).reshape(1, c, 1, 1)
    if activation == 1:
        y = y / (1 + np.exp(-y))
    if channels_last:
        y = np.moveaxis(y, 1, 3)
    return y.astype(s.dtype)


def _group_norm_reference(X, gamma, beta, **attrs):
    return _normalize(X, gamma, beta, **attrs)


def _skip_group_norm_reference(X, gamma, beta, skip, bias=None, **attrs):
    if skip.ndim == 2:  # (N, C)
        skip = skip[:, None, None, :] if attrs["channels_last"] else skip[:, :, None, None]
    s = X.astype(np.float64) + skip
    if bias is not None:
        s = s + (bias if attrs["channels_last"] else bias.reshape(-1, 1, 1))
    s = s.astype(X.dtype)
    return _normalize(s, gamma, beta, **attrs), s


ContribGroupNorm = Op(
    "GroupNorm",
    inputs=[Input("X", "T"), Input("gamma", "M"), Input("beta", "M")],
    outputs=[Output("Y", "T", shape="X")],
    types=TYPES,
    attrs=ATTRS,
    native="ortcustom.ops._contrib:contrib_group_norm",
    reference=_group_norm_reference,
    doc="com.microsoft GroupNorm: Y = act((X - mean) / sqrt(var + epsilon) * gamma[c] + beta[c]), "
        "mean and variance over each (n, group) of C / groups channels, X 4-D (NHWC or NCHW).",
)

SkipGroupNorm = Op(
    "SkipGroupNorm",
    inputs=[Input("X", "T"), Input("gamma", "M"), Input("beta", "M"), Input("skip", "T"),
            Input("bias", "T", optional=True)],
    outputs=[Output("Y", "T", shape="X"), Output("S", "T", shape="X", optional=True)],
    types=TYPES,
    attrs=ATTRS,
    native="ortcustom.ops._contrib:skip_group_norm",
    reference=_skip_group_norm_reference,
    doc="com.microsoft SkipGroupNorm: S = X + skip + bias[c] (skip: X's shape, (N, 1, 1, C) or "
        "(N, C)), Y = GroupNorm(S).",
)

ALL = (ContribGroupNorm, SkipGroupNorm)


def domain() -> Domain:
    """A com.microsoft domain with both ops, for `ortcustom.session_options`."""
    return Domain("com.microsoft").add(*ALL)


def library_domains():
    """What the plain library ops/_contrib.so registers (its build reads it): all of ortcustom's ops
    for a CPU host in one library, since ORT takes one registration per domain name: com.microsoft
    with ortcustom's Inverse and these two, and the `ortcustom` domain (CPU kernels)."""
    from . import ALL as OWN, Inverse

    return [Domain("com.microsoft").add(Inverse, *ALL), Domain("ortcustom").add(*OWN)]


def get_library_path() -> str:
    """The plain custom-op library (no Python, CPU kernels) registering com.microsoft::{Inverse,
    GroupNorm, SkipGroupNorm} and every op of the `ortcustom` domain: for ORT outside Python (C/C++,
    C#, Java, Triton) or a Python process without ortcustom, on a CPU host. It serves everything
    ortcustom's main library does (without CUDA kernels): register one of the two."""
    from ..native import library_file  # (a call up: the runtime finds files)

    return library_file(__name__.rpartition(".")[0] + "._contrib")


def inference_session(model, providers=None, sess_options=None):
    """An onnxruntime.InferenceSession of `model` (path or bytes) with ORT's own kernels for these
    ops where it has them for its providers (CUDA), else ortcustom's CPU kernels (then registered
    on `sess_options`, which is created when None)."""
    import onnxruntime as ort
    from onnxruntime.capi.onnxruntime_pybind11_state import NotImplemented as OrtNotImplemented

    try:
        return ort.InferenceSession(model, sess_options, providers=providers)
    except OrtNotImplemented:  # e.g. "Could not find an implementation for GroupNorm(1)"
        so = domain().register(sess_options if sess_options is not None else ort.SessionOptions())
        return ort.InferenceSession(model, so, providers=providers)
