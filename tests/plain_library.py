"""A package's plain custom-op library built as its meson.build builds it, with the compiler
directly: the table from the package's declarations (`python -m ortcustom library-source`), then
kernels + table + ortcustom's installed glue into one shared library."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import ortcustom
from helpers import compile_kernels


def build_library(src: Path, ref: str, kernel_sources, out: Path) -> Path:
    """What a package's meson.build does, with the compiler directly: the table and the kernels'
    header (<package>_spec.h) from the declarations `ref` ("module:attr", importable from `src`)
    names, then kernels + table + ortcustom's glue into one plain library at `out`."""
    out = Path(out)
    table = out.parent / "table.cpp"
    header = out.parent / (ref.partition(":")[0] + "_spec.h")
    r = subprocess.run([sys.executable, "-m", "ortcustom", "library-source", "--path", str(src), ref, "-o", str(table),
                        "--header", str(header)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    glue = Path(ortcustom.__file__).parent / "glue"
    return compile_kernels([*kernel_sources, table, *[glue / f for f in ("attrs.cpp", "ort_op.cpp", "run.cpp")]],
                           out, f"-I{glue}", f"-I{header.parent}", f"-Wl,--version-script={glue / 'library.map'}")


_registration: dict[str, Path] = {}
NATIVE = Path(__file__).parent / "native"


def registration_declarations():
    """native/registration_ops.py, imported (its declarations make the tests' models)."""
    if str(NATIVE) not in sys.path:
        sys.path.append(str(NATIVE))
    import registration_ops

    return registration_ops


def registration_library(name: str, tmp_dir: Path) -> Path:
    """The library of native/registration_ops.py's list `name` (VERSIONS, UNTIL, MAIN, OTHER),
    built once per test run."""
    if name not in _registration:
        out = Path(tmp_dir) / name.lower() / f"registration_{name.lower()}.so"  # a folder each: table, header
        out.parent.mkdir(parents=True, exist_ok=True)
        _registration[name] = build_library(NATIVE, f"registration_ops:{name}", [NATIVE / "registration_kernels.cpp"],
                                            out)
    return _registration[name]


def without_ortcustom(libraries, model=None, feeds=None, *, code_after="", tmp_dir) -> dict:
    """Registers `libraries` (in order) into one SessionOptions in a Python process that imports
    onnxruntime and numpy only, then (with a model: an onnx ModelProto) makes a session and runs it
    on `feeds`. Returns {"failed": None or "register" / "session" / "run", "error": its message,
    "outputs": [arrays]}. `code_after`: more code run at the end (`so`, `sess` defined)."""
    import json
    import textwrap

    import numpy as np

    from helpers import run_python

    tmp_dir = Path(tmp_dir)
    if model is not None:
        (tmp_dir / "m.onnx").write_bytes(model.SerializeToString())
        np.savez(tmp_dir / "feeds.npz", **(feeds or {}))
    code = textwrap.dedent(f"""
        import json, sys, numpy as np, onnxruntime as ort
        stage, error, sess = None, None, None
        so = ort.SessionOptions()
        try:
            stage = "register"
            for lib in {[str(x) for x in libraries]!r}:
                so.register_custom_ops_library(lib)
            if {model is not None!r}:
                stage = "session"
                sess = ort.InferenceSession({str(tmp_dir / 'm.onnx')!r}, so, providers=["CPUExecutionProvider"])
                stage = "run"
                out = sess.run(None, dict(np.load({str(tmp_dir / 'feeds.npz')!r}, allow_pickle=True)))
                np.savez({str(tmp_dir / 'out.npz')!r}, *out)
            stage = None
        except Exception as e:
            error = str(e)
        assert "ortcustom" not in sys.modules
    """) + textwrap.dedent(code_after) + textwrap.dedent(f"""
        print("RESULT " + json.dumps({{"failed": stage, "error": error}}))
    """)
    r = run_python(code)
    assert r.returncode == 0, r.stdout + r.stderr
    result = json.loads(r.stdout.split("RESULT ", 1)[1])
    result["stdout"] = r.stdout
    # (our own file: string outputs are object arrays)
    got = np.load(tmp_dir / "out.npz", allow_pickle=True) if result["failed"] is None and model is not None else {}
    result["outputs"] = [got[f"arr_{i}"] for i in range(len(got.files))] if got else []
    return result
