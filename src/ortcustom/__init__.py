"""ortcustom: custom operators for ONNX Runtime, declared in Python, run by compiled kernels.

    import ortcustom
    from ortcustom.ops import Inverse
    so = ortcustom.session_options(ortcustom.Domain("com.microsoft").add(Inverse))
"""
from ._ort_install import check_onnxruntime_install as _check_onnxruntime_install

_check_onnxruntime_install()  # first: two ORT distributions over one folder fail here, clearly

from ._build import BUILD as _BUILD  # noqa: E402
from .native import load_kernels  # noqa: E402
from .reference import reference_ops  # noqa: E402
from .registry import Attr, Domain, Input, Op, Output  # noqa: E402
from .session import MIN_ORT_VERSION, get_library_path, register, session_options  # noqa: E402

__version__ = _BUILD["version"]

# what ortcustom.export and ortcustom.torch_ops need; ortcustom is not on the package index, so no "ortcustom[torch]"
_INSTALL_TORCH = 'pip install torch onnxscript, or in an ortcustom checkout pip install ".[torch]"'


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
