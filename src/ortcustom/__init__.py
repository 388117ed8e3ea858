"""ortcustom: custom operators for ONNX Runtime, declared in Python, run by compiled kernels.

    import ortcustom
    from ortcustom.ops import Inverse
    so = ortcustom.session_options(ortcustom.Domain("com.microsoft").add(Inverse))
"""
from ._build import BUILD as _BUILD
from .native import load_kernels
from .reference import reference_ops
from .registry import Attr, Domain, Input, Op, Output
from .session import MIN_ORT_VERSION, get_library_path, register, session_options

__version__ = _BUILD["version"]


def get_include() -> str:
    """The directory holding ortcustom/kernel.h (the kernel ABI), kernel.hpp and module.h."""
    import os

    return os.path.join(os.path.dirname(__file__), "include")


def build_info() -> dict:
    """How this copy was built: version, cuda (bool), cuda_archs, ort_api_version, min_ort_version."""
    from . import _customop

    return {
        "version": __version__,
        "cuda": _BUILD["cuda"],
        "cuda_archs": list(_BUILD["cuda_archs"]),
        "ort_api_version": _customop.ORT_API_VERSION,
        "min_ort_version": MIN_ORT_VERSION,
    }


__all__ = ["Attr", "Domain", "Input", "Op", "Output", "build_info", "get_include", "get_library_path", "load_kernels",
           "reference_ops", "register",
           "session_options", "MIN_ORT_VERSION", "__version__"]
