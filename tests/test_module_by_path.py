"""ortcustom's Python extension module (`_customop*.so`, which exports RegisterCustomOps for the
Python path) given to ONNX Runtime by path, as if it were the plain library: a clear ORT error in
every process, whether or not anything of ortcustom was imported (it used to segfault when the
module itself was not), and a clean load failure in a C host (no libpython there)."""
import textwrap

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from ortcustom import _customop
from c_host import needs_c_library, run_host
from helpers import run_python

MODULE = _customop.__file__
EXPLAINED = "give ONNX Runtime the plain library of ortcustom.get_library_path()"


@pytest.mark.parametrize("imports", ["", "import ortcustom", "import ortcustom.kernels"])
def test_registered_by_path_in_a_process_that_never_imported_it(imports):
    code = textwrap.dedent(f"""
        import sys
        import onnxruntime as ort
        {imports}
        assert "ortcustom._customop" not in sys.modules, "the case needs the module not imported"
        so = ort.SessionOptions()
        try:
            so.register_custom_ops_library({MODULE!r})
        except Exception as e:
            print("ERROR", type(e).__name__, e)
        else:
            print("REGISTERED")
    """)
    if imports == "import ortcustom.kernels":  # imports _customop: the initialised module's answer
        code = code.replace('assert "ortcustom._customop" not in', 'assert "ortcustom._customop" in')
    r = run_python(code)
    assert r.returncode == 0, f"exit {r.returncode}\n{r.stdout}{r.stderr}"
    assert "ERROR Fail" in r.stdout and EXPLAINED in r.stdout, r.stdout + r.stderr


def test_registered_by_path_in_this_process():
    so = ort.SessionOptions()
    with pytest.raises(Exception, match="give ONNX Runtime the plain library"):
        so.register_custom_ops_library(MODULE)


@needs_c_library
def test_c_host_refuses_to_load_it_cleanly():
    """No libpython in a C host: the module cannot even be loaded, and ORT says so."""
    x = np.ones((2, 3), np.float32)
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    r = run_host(model, {"x": x}, libraries=[MODULE])
    assert r.returncode == 3, r.stdout + r.stderr  # library registration failed, nothing crashed
    assert "Failed to load library" in r.error and "undefined symbol" in r.error
