"""ortcustom: custom operators for ONNX Runtime, declared in Python, run by compiled kernels.

    import ortcustom
    from ortcustom.ops import Inverse
    so = ortcustom.session_options(ortcustom.Domain("com.microsoft").add(Inverse))
"""
from ._ort_install import check_onnxruntime_install as _check_onnxruntime_install

_check_onnxruntime_install()  # first: two ORT distributions over one folder fail here, clearly

from .native import load_kernels  # noqa: E402
from .registry import Attr, Domain, Input, Op, Output  # noqa: E402
from .session import MIN_ORT_VERSION, get_library_path, register, session_options  # noqa: E402

# The declarations (registry) import with NumPy alone: a package's build imports them to generate
# its plain library's table, from a source tree, before anything here is compiled.


def __getattr__(name):
    if name == "__version__":
        from ._build import BUILD

        return BUILD["version"]
    if name == "reference_ops":
        from .reference import reference_ops

        return reference_ops
    raise AttributeError(f"module 'ortcustom' has no attribute {name!r}")

# what ortcustom.export and ortcustom.torch_ops need; ortcustom is not on the package index, so no "ortcustom[torch]"
_INSTALL_TORCH = 'pip install torch onnxscript, or in an ortcustom checkout pip install ".[torch]"'


def get_include() -> str:
    """The directory holding ortcustom/kernel.h (the kernel ABI), kernel.hpp and op_def.h."""
    import os

    return os.path.join(os.path.dirname(__file__), "include")


def build_info() -> dict:
    """How this copy was built: version, cuda (bool), cuda_archs, ort_api_version, min_ort_version."""
    from . import _customop
    from ._build import BUILD

    return {
        "version": BUILD["version"],
        "cuda": BUILD["cuda"],
        "cuda_archs": list(BUILD["cuda_archs"]),
        "ort_api_version": _customop.ORT_API_VERSION,
        "min_ort_version": MIN_ORT_VERSION,
    }


__all__ = ["Attr", "Domain", "Input", "Op", "Output", "build_info", "get_include", "get_library_path", "load_kernels",
           "reference_ops", "register",
           "session_options", "MIN_ORT_VERSION", "__version__"]
