"""`python -m ortcustom info` (what was built and found) and `python -m ortcustom demo` (the main job)."""
from __future__ import annotations

import argparse
import sys

import numpy as np


def info() -> int:
    import onnxruntime as ort

    import ortcustom
    from ortcustom import _customop, _kernels
    from ortcustom.ops import ALL

    b = ortcustom.build_info()
    print(f"ortcustom {b['version']}")
    print(f"  onnxruntime found: {ort.__version__} ({ort.__file__.rsplit('/', 2)[0]})")
    print(f"  providers available: {', '.join(ort.get_available_providers())}")
    print(f"  ORT API version declared: {b['ort_api_version']}; minimum onnxruntime: {b['min_ort_version']}")
    print(f"  CPU kernels run with: {_kernels.cpu_isa()}")
    print(f"  CUDA kernels built: {'yes, for sm ' + ', '.join(b['cuda_archs']) if b['cuda'] else 'no'}")
    if b["cuda"]:
        n = _kernels.cuda_device_count()
        print(f"  CUDA GPUs usable now: {n}" + ("" if n else " (no GPU or no driver: the CPU kernels run)"))
    print(f"  library for register_custom_ops_library: {ortcustom.get_library_path()}")
    print("  built-in ops (ortcustom.ops):")
    for op in ALL:
        print(f"    {op.name}{op.accepted_types()}  kernel: {op.native or 'python'}")
    return 0


def demo() -> int:
    """Inverts a batch of matrices with ortcustom's Inverse inside an ORT graph, checks with NumPy."""
    import onnxruntime as ort
    from onnx import TensorProto, helper

    import ortcustom
    from ortcustom.ops import Inverse
    from ortcustom.testing import for_runtime

    domain = ortcustom.Domain("com.microsoft").add(Inverse)
    # X -> Inverse (ours, com.microsoft) -> Y;  MatMul(X, Y) -> I (ORT's own op)
    graph = helper.make_graph(
        [helper.make_node("Inverse", ["X"], ["Y"], domain="com.microsoft", name="inverse"),
         helper.make_node("MatMul", ["X", "Y"], ["I"], name="check")],
        "demo",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["batch", 8, 8])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["batch", 8, 8]),
         helper.make_tensor_value_info("I", TensorProto.FLOAT, ["batch", 8, 8])])
    model = for_runtime(helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]))
    sess = ort.InferenceSession(model.SerializeToString(), ortcustom.session_options(domain),
                                providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((16, 8, 8)) + 8 * np.eye(8)).astype(np.float32)
    y, eye = sess.run(None, {"X": x})
    err = float(np.abs(y - np.linalg.inv(x)).max())
    res = float(np.abs(eye - np.eye(8)).max())
    print("ortcustom demo: a model X -> com.microsoft.Inverse -> Y, plus MatMul(X, Y), on ORT "
          f"{ort.__version__} (CPU)")
    print(f"  input: 16 matrices 8x8 float32; registered: {domain}")
    print(f"  max |Y - numpy.linalg.inv(X)| = {err:.2e}")
    print(f"  max |X @ Y - I|               = {res:.2e}")
    ok = err < 1e-4 and res < 1e-4
    print("  OK" if ok else "  MISMATCH")
    return 0 if ok else 1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ortcustom", description=__doc__)
    parser.add_argument("command", choices=["info", "demo"])
    args = parser.parse_args(argv)
    return {"info": info, "demo": demo}[args.command]()


if __name__ == "__main__":
    sys.exit(main())
