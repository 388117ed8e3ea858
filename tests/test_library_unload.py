"""A plain library loaded and unloaded again and again (register, make a session, drop both: ORT
unloads the library) keeps memory bounded: what the glue made for ORT (its OrtCustomOps, the ORT
domains) is freed when ORT unloads the library; before, each cycle kept ~10 KB (ortcustom's
library), and a server that loads models on demand grew without limit."""
import textwrap

import numpy as np
import pytest

import ortcustom
from c_host import needs_c_library, run_host
from helpers import run_python
from ortcustom.ops import Inverse, contrib
from ortcustom.testing import make_model
from plain_library import registration_declarations, registration_library

CYCLES = 400
BOUND = 1500  # bytes per cycle, over the later cycles (ORT's own churn is well below)


def inverse_model():
    return make_model(Inverse, ortcustom.Domain("com.microsoft").add(Inverse), {"X": np.eye(3, dtype=np.float32)[None]})


def per_cycle(rss: dict) -> float:
    """Growth per cycle over the second half (the allocators' arenas have grown by then)."""
    keys = sorted(rss)
    first, last = keys[len(keys) // 2], keys[-1]
    return (rss[last] - rss[first]) / (last - first)


@needs_c_library
def test_c_host_cycles_of_ortcustoms_library_stay_flat():
    x = np.eye(3, dtype=np.float32)[None]
    r = run_host(inverse_model(), {"X": x}, libraries=[ortcustom.get_library_path()], cycles=CYCLES)
    assert r.returncode == 0, r.stdout
    assert len(r.rss) == 9
    assert per_cycle(r.rss) < BOUND, r.rss


@needs_c_library
def test_c_host_cycles_of_a_package_library_stay_flat(tmp_path_factory):
    decl = registration_declarations()
    lib = registration_library("MAIN", tmp_path_factory.mktemp("unload"))
    feeds = {n: np.zeros(2, np.float32) for n in "ABCD"}
    r = run_host(make_model(decl.PICK, decl.MAIN[1], feeds), feeds, libraries=[lib], cycles=CYCLES)
    assert r.returncode == 0, r.stdout
    assert per_cycle(r.rss) < BOUND, r.rss


def test_python_without_ortcustom_cycles_stay_flat_and_unload(tmp_path):
    path = tmp_path / "m.onnx"
    path.write_bytes(inverse_model().SerializeToString())
    code = textwrap.dedent(f"""
        import gc, os, sys, numpy as np, onnxruntime as ort
        lib, x = {ortcustom.get_library_path()!r}, np.eye(3, dtype=np.float32)[None]

        def rss():
            with open("/proc/self/statm") as f:
                return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

        def mapped():
            with open("/proc/self/maps") as f:
                return lib in f.read()

        seen = {{}}
        for c in range(1, {2 * CYCLES} + 1):
            so = ort.SessionOptions()
            so.register_custom_ops_library(lib)
            sess = ort.InferenceSession({str(path)!r}, so, providers=["CPUExecutionProvider"])
            sess.run(None, {{"X": x}})
            assert mapped()
            del sess, so
            gc.collect()
            assert not mapped(), "ORT did not unload the library"
            if c % {CYCLES // 4} == 0:  # 8 points
                seen[c] = rss()
        assert "ortcustom" not in sys.modules
        print("RSS", seen)
    """)
    r = run_python(code, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    rss = eval(r.stdout.split("RSS ", 1)[1])
    assert per_cycle(rss) < BOUND, rss


@pytest.mark.parametrize("library", ["main", "contrib"])
def test_exit_with_sessions_alive_is_clean(library):
    # the library's static destructor runs at exit while sessions (and their kernels) still live:
    # it must leave them alone
    lib = ortcustom.get_library_path() if library == "main" else contrib.get_library_path()
    code = textwrap.dedent(f"""
        import gc, onnxruntime as ort
        gc.disable()
        so = ort.SessionOptions()
        so.register_custom_ops_library({lib!r})
        keep = [so]
        keep.append(keep)  # a cycle: finalization may leave it
    """)
    if library == "main":
        path_code = repr(inverse_model().SerializeToString())
        code += textwrap.dedent(f"""
        import numpy as np
        sess = ort.InferenceSession({path_code}, so, providers=["CPUExecutionProvider"])
        keep.append(sess)
        sess.run(None, {{"X": np.eye(3, dtype=np.float32)[None]}})
        """)
    r = run_python(code)
    assert r.returncode == 0, r.stdout + r.stderr
