"""myops: custom ONNX Runtime ops with compiled kernels (made with ortcustom).

    import onnxruntime as ort, ortcustom, myops
    sess = ort.InferenceSession(model, ortcustom.session_options(myops.domain))
"""
import ortcustom

from .ops import ALL, ScaledAdd

DOMAIN = "myops"
domain = ortcustom.Domain(DOMAIN).add(*ALL)
"""The ONNX domain of the ops (nodes `myops::ScaledAdd`): for ortcustom.session_options."""

__all__ = ["ALL", "DOMAIN", "ScaledAdd", "domain"]
