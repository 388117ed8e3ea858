"""Deploy without Python: the plain custom-op libraries (ortcustom.get_library_path(), contrib's, a
package's own) run by ONNX Runtime's C API in a C host (tests/c_host), and by a Python process that
never imports ortcustom; the same outputs as ortcustom's Python path, our kernels provably running,
errors naming op and node, the host surviving them."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import ortcustom
from ortcustom import kernels
from ortcustom.ops import GroupNorm, Inverse, contrib
from ortcustom.testing import for_runtime, make_model
from c_host import no_c_library_reason, run_host
from helpers import run_python, well_conditioned
from plain_library import build_library

CPU = ["CPUExecutionProvider"]
REPO = Path(__file__).resolve().parent.parent
needs_c_host = pytest.mark.skipif(no_c_library_reason() is not None, reason=str(no_c_library_reason()))


def custom_inverse_model(dynamo: bool):
    """Seed 001: torch.inverse(x) + x, exported by ortcustom.export (com.microsoft::Inverse)."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnxscript")
    import ortcustom.export as oe

    class CustomInverse(torch.nn.Module):
        def forward(self, x):
            return torch.inverse(x) + x

    x = torch.randn(3, 4, 4, generator=torch.Generator().manual_seed(0)) + 4 * torch.eye(4)
    m = oe.export(CustomInverse(), (x,), dynamo=dynamo, input_names=["x"], output_names=["y"])
    assert ("com.microsoft", "Inverse") in [(n.domain, n.op_type) for n in m.graph.node]
    return m, x.numpy()


def python_path(model, feeds, domains):
    sess = ort.InferenceSession(model.SerializeToString(), ortcustom.session_options(*domains), providers=CPU)
    return sess.run(None, feeds)


def without_ortcustom(model_path, feeds: dict, library: str, tmp_path) -> dict:
    """The model run by a Python process that imports onnxruntime and numpy only."""
    np.savez(tmp_path / "feeds.npz", **feeds)
    code = textwrap.dedent(f"""
        import sys, numpy as np, onnxruntime as ort
        so = ort.SessionOptions()
        so.register_custom_ops_library({library!r})
        sess = ort.InferenceSession({str(model_path)!r}, so, providers=["CPUExecutionProvider"])
        feeds = dict(np.load({str(tmp_path / 'feeds.npz')!r}))
        out = sess.run(None, feeds)
        assert "ortcustom" not in sys.modules
        np.savez({str(tmp_path / 'out.npz')!r}, *out)
    """)
    r = run_python(code)
    assert r.returncode == 0, r.stdout + r.stderr
    got = np.load(tmp_path / "out.npz")
    return [got[f"arr_{i}"] for i in range(len(got.files))]


VIA = [pytest.param("c_host", marks=needs_c_host), "python"]


def deployed(via, model, feeds: dict, library, tmp_path) -> list:
    """The model's outputs where ortcustom is not: a C host (4 threads on one session, which must
    agree, and no libpython in the process) or a Python process without ortcustom."""
    if via == "python":
        path = tmp_path / "deployed.onnx"
        onnx.save(model, path)
        return without_ortcustom(path, feeds, str(library), tmp_path)
    r = run_host(model, feeds, libraries=[library], threads=4, repeat=2)
    assert r.returncode == 0, r.stdout + r.stderr
    assert not r.libpython
    return [r.outputs[o.name] for o in model.graph.output]


# ---- ortcustom's own library ---------------------------------------------------------------------

@pytest.mark.parametrize("via", VIA)
@pytest.mark.parametrize("dynamo", [True, False], ids=["dynamo", "torchscript"])
def test_exported_custom_inverse_deployed(dynamo, via, tmp_path):
    m, x = custom_inverse_model(dynamo)
    want = python_path(m, {"x": x}, [ortcustom.Domain("com.microsoft").add(Inverse)])[0]
    (got,) = deployed(via, m, {"x": x}, ortcustom.get_library_path(), tmp_path)
    np.testing.assert_array_equal(got, want)  # the same kernel: bit for bit
    np.testing.assert_array_equal(got, kernels.inverse(x) + x)


@needs_c_host
def test_our_inverse_ran_not_ort_builtin():
    # ORT's contrib Inverse would take this; ours refuses it, in its own words
    x = np.ones((2, 3, 4), np.float32)
    m = make_model(Inverse, ortcustom.Domain("com.microsoft").add(Inverse), {"X": (np.float32, ["N", "A", "B"])})
    r = run_host(m, {"X": x}, libraries=[ortcustom.get_library_path()])
    assert r.returncode == 5, r.stdout
    assert "Inverse (node 'n0'): input X has shape (2, 3, 4)" in r.error
    again = run_host(m, {"X": np.eye(3, dtype=np.float32)[None]}, libraries=[ortcustom.get_library_path()])
    assert again.returncode == 0, again.stdout  # a fresh host; the same library works


@needs_c_host
def test_builtin_domain_ortcustom_group_norm_and_bad_attribute():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 6, 5)).astype(np.float32)
    dom = ortcustom.Domain("ortcustom").add(GroupNorm)
    m = make_model(GroupNorm, dom, {"X": x}, attrs={"num_groups": 3})
    r = run_host(m, {"X": x}, libraries=[ortcustom.get_library_path()])
    assert r.returncode == 0, r.stdout
    np.testing.assert_array_equal(r.outputs["Y"], python_path(m, {"X": x}, [dom])[0])
    bad = make_model(GroupNorm, dom, {"X": x}, attrs={"num_groups": 3, "epsilon": -1.0})
    r = run_host(bad, {"X": x}, libraries=[ortcustom.get_library_path()])
    assert r.returncode == 4, r.stdout
    words = "GroupNorm (node 'n0'): attribute epsilon=-1.0 is invalid: must be >= 0"
    assert words in r.error
    with pytest.raises(Exception) as e:
        python_path(bad, {"X": x}, [dom])
    assert words in str(e.value)  # the same words from the Python module


def test_python_without_ortcustom_runs_the_library(tmp_path):
    x = well_conditioned(np.random.default_rng(2), (5, 4, 4), np.float32)
    dom = ortcustom.Domain("com.microsoft").add(Inverse)
    m = make_model(Inverse, dom, {"X": x})
    onnx.save(m, tmp_path / "m.onnx")
    got = without_ortcustom(tmp_path / "m.onnx", {"X": x}, ortcustom.get_library_path(), tmp_path)
    np.testing.assert_array_equal(got[0], python_path(m, {"X": x}, [dom])[0])


def test_the_python_module_given_by_path_explains_itself():
    so = ort.SessionOptions()
    from ortcustom import _customop

    with pytest.raises(Exception, match="give ONNX Runtime the plain library"):
        so.register_custom_ops_library(_customop.__file__)


def test_library_path_of_a_domain():
    assert ortcustom.get_library_path(ortcustom.Domain("ortcustom").add(Inverse, GroupNorm)) == ortcustom.get_library_path()
    py = ortcustom.Op("Twice", inputs=[ortcustom.Input("X", "float")], outputs=[ortcustom.Output("Y", "float")],
                      compute=lambda X: 2 * X)
    with pytest.raises(ValueError, match="Python kernels \\(Twice\\)"):
        ortcustom.get_library_path(ortcustom.Domain("d").add(py))
    r = subprocess.run([sys.executable, "-m", "ortcustom", "library"], capture_output=True, text=True)
    assert r.stdout.strip() == ortcustom.get_library_path()
    r = subprocess.run([sys.executable, "-m", "ortcustom", "library", "ortcustom.ops.contrib:domain"],
                       capture_output=True, text=True)
    assert r.stdout.strip() == contrib.get_library_path()
    with pytest.raises(ValueError, match="does not register mine::Inverse"):
        ortcustom.get_library_path(ortcustom.Domain("mine").add(Inverse))
    # the contrib library serves com.microsoft's Inverse too: the one library for both
    both = ortcustom.Domain("com.microsoft").add(Inverse, contrib.ContribGroupNorm)
    assert ortcustom.get_library_path(both) == contrib.get_library_path()
    with pytest.raises(ValueError, match=r"kernels from 2 libraries \(.*\), none of which registers all") as e:
        ortcustom.get_library_path(ortcustom.Domain("mine").add(Inverse, contrib.ContribGroupNorm))
    assert re.search(r"Inverse from \S*_kernels.so[;)]", str(e.value)) and re.search(r"GroupNorm from \S*_contrib.so[;)]",
                                                                                  str(e.value))


# ---- the contrib library: a fused Stable Diffusion block on a CPU host without Python ---------------

@pytest.mark.parametrize("via", VIA)
def test_fused_unet_block_with_contrib_library(via, tmp_path):
    from helpers import fused_unet_block

    model, x, want = fused_unet_block(tmp_path)
    ours = python_path(model, {"x": x}, [contrib.domain()])[0]
    (got,) = deployed(via, model, {"x": x}, contrib.get_library_path(), tmp_path)
    np.testing.assert_array_equal(got, ours)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("via", VIA)
def test_the_contrib_library_serves_all_of_ortcustoms_ops_in_one_registration(via, tmp_path):
    """ORT takes one registration per domain name: a CPU host whose model holds com.microsoft's
    Inverse (torch.inverse exported) and GroupNorm (fused by ORT's optimizer) and an op of the
    `ortcustom` domain registers the contrib library alone."""
    from ortcustom.ops import Cholesky

    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 4, 4)).astype(np.float32)
    spd = a @ a.transpose(0, 2, 1) + 4 * np.eye(4, dtype=np.float32)
    x = rng.standard_normal((2, 4, 4, 1)).astype(np.float32)  # NHWC, one channel
    gamma, beta = np.ones(1, np.float32), np.zeros(1, np.float32)
    nodes = [helper.make_node("Inverse", ["A"], ["I"], domain="com.microsoft"),
             helper.make_node("Cholesky", ["A"], ["L"], domain="ortcustom"),
             helper.make_node("GroupNorm", ["X", "gamma", "beta"], ["G"], domain="com.microsoft", activation=0,
                              groups=1, epsilon=1e-5, channels_last=1)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("A", TensorProto.FLOAT, [2, 4, 4]),
                                           helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 4, 4, 1]),
                                           helper.make_tensor_value_info("gamma", TensorProto.FLOAT, [1]),
                                           helper.make_tensor_value_info("beta", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in "ILG"])
    model = for_runtime(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                                helper.make_opsetid("com.microsoft", 1),
                                                                helper.make_opsetid("ortcustom", 1)]))
    feeds = {"A": spd, "X": x, "gamma": gamma, "beta": beta}
    inv, chol, gn = deployed(via, model, feeds, contrib.get_library_path(), tmp_path)
    np.testing.assert_array_equal(inv, kernels.inverse(spd))
    np.testing.assert_array_equal(chol, kernels.call(Cholesky, spd))
    want = python_path(model, feeds, [ortcustom.Domain("com.microsoft").add(Inverse, *contrib.ALL),
                                      ortcustom.Domain("ortcustom").add(Cholesky)])[2]
    np.testing.assert_array_equal(gn, want)


# ---- a package's own library: the scaffold's and examples/group_norm's ---------------------------

@pytest.fixture(scope="module")
def scaffold(tmp_path_factory):
    """`python -m ortcustom new deployops`, its library built (once for the module)."""
    tmp = tmp_path_factory.mktemp("scaffold")
    r = subprocess.run([sys.executable, "-m", "ortcustom", "new", "deployops", "--dir", str(tmp)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    root = tmp / "deployops"
    return root, build_library(root / "src", "deployops:domain", [root / "kernels" / "cpu" / "scaled_add.cpp"],
                               root / "src" / "deployops" / "_kernels.so")


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    """examples/group_norm's package, its library built (once for the module)."""
    src = tmp_path_factory.mktemp("example") / "src"
    shutil.copytree(REPO / "examples" / "group_norm" / "src", src)
    return src, build_library(src, "custom_group_norm:domain",
                              [REPO / "examples" / "group_norm" / "kernels" / "group_norm.cpp"],
                              src / "custom_group_norm" / "_kernels.so")


@pytest.fixture
def importable(tmp_path, monkeypatch):
    """Puts a package folder first on sys.path for this test, and forgets it afterwards."""
    def add(folder: Path, name: str):
        monkeypatch.syspath_prepend(str(folder))
        return __import__(name)

    yield add
    for name in [n for n in sys.modules if n.split(".")[0] in ("deployops", "custom_group_norm")]:
        del sys.modules[name]


@pytest.mark.parametrize("via", VIA)
def test_scaffold_package_library(via, tmp_path, importable, scaffold):
    root, lib = scaffold
    pkg = importable(root / "src", "deployops")
    rng = np.random.default_rng(3)
    x, y = (rng.standard_normal((3, 5)).astype(np.float32) for _ in range(2))
    m = make_model(pkg.ScaledAdd, pkg.domain, {"X": (np.float32, ["a", "b"]), "Y": (np.float32, ["c", "d"])},
                   attrs={"alpha": 0.5})
    want = python_path(m, {"X": x, "Y": y}, [pkg.domain])[0]
    assert ortcustom.get_library_path(pkg.domain) == str(lib)
    (got,) = deployed(via, m, {"X": x, "Y": y}, lib, tmp_path)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, kernels.call(pkg.ScaledAdd, x, y, alpha=0.5))
    if via == "c_host":
        bad = run_host(m, {"X": x, "Y": y[:, :4].copy()}, libraries=[lib])
        assert bad.returncode == 5 and "ScaledAdd (node 'n0')" in bad.error


def test_a_build_refuses_a_kernel_that_does_not_match_its_declaration(tmp_path, scaffold):
    """The package's build step (library-check, after linking): each fact of the signature is
    written twice (kernel spec, declaration), and a mismatch stops the build saying why."""
    root, lib = scaffold
    src = tmp_path / "src"
    shutil.copytree(root / "src", src)
    (src / "deployops" / "_kernels.so").unlink()
    check = [sys.executable, "-m", "ortcustom", "library-check", "--path", str(src), str(lib), "deployops:domain"]
    assert subprocess.run(check, capture_output=True, text=True).returncode == 0
    ops = src / "deployops" / "ops.py"
    ops.write_text(ops.read_text().replace('"float16")', '"float16", "int64")'))
    r = subprocess.run(check, capture_output=True, text=True)
    assert r.returncode == 1
    assert "deployops::ScaledAdd: native kernel 'scaled_add' has no signature for the declared type binding " \
           "(X: int64, Y: int64, Z: int64)" in r.stderr


@pytest.mark.parametrize("via", VIA)
def test_example_group_norm_library(via, tmp_path, importable, example):
    src, lib = example
    pkg = importable(src, "custom_group_norm")
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 4, 3, 3)).astype(np.float32)
    feeds = {"X": x, "num_groups": np.array([2.0], np.float32), "scale": rng.standard_normal(4).astype(np.float32),
             "bias": rng.standard_normal(4).astype(np.float32)}
    m = make_model(pkg.MyGroupNorm, pkg.domain, feeds, attrs={"epsilon": 1e-3})
    want = python_path(m, feeds, [pkg.domain])[0]
    (got,) = deployed(via, m, feeds, lib, tmp_path)
    np.testing.assert_array_equal(got, want)
    if via == "python":
        return
    bad = make_model(pkg.MyGroupNorm, pkg.domain, feeds, attrs={"epsilon": -1.0})
    h = run_host(bad, feeds, libraries=[lib])
    assert h.returncode == 4 and "mygroupnorm (node 'n0'): attribute epsilon=-1.0 is invalid: must be >= 0" in h.error


# ---- shape inference: unknown dims stay unknown, node by node (a real-model failure) ----------------

def two_inverses_of_different_sizes():
    """X (N, K, K) -> Inverse -> Y1; X resized to (N, 2K, 2K) -> Inverse -> Y2, with symbolic dims:
    a name shared by the two nodes' unknown dims would make ORT reuse one's buffer for the other."""
    X = helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", "K", "K"])
    nodes = [
        helper.make_node("Inverse", ["X"], ["Y1"], domain="com.microsoft", name="inv1"),
        helper.make_node("Unsqueeze", ["X", "axes"], ["X4"]),
        helper.make_node("Resize", ["X4", "", "scales"], ["R4"], mode="nearest"),
        helper.make_node("Squeeze", ["R4", "axes"], ["R"]),
        helper.make_node("Inverse", ["R"], ["Y2"], domain="com.microsoft", name="inv2"),
        helper.make_node("ReduceSum", ["Y1"], ["S1"], keepdims=0),
        helper.make_node("ReduceSum", ["Y2"], ["S2"], keepdims=0),
    ]
    inits = [helper.make_tensor("axes", TensorProto.INT64, [1], [1]),
             helper.make_tensor("scales", TensorProto.FLOAT, [4], [1, 1, 2, 2])]
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("S1", "S2", "Y2")]
    g = helper.make_graph(nodes, "g", [X], outs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    return for_runtime(m)


@pytest.mark.parametrize("via", ["python", "library"])
def test_symbolic_dims_of_several_nodes_at_several_sizes(via):
    m = two_inverses_of_different_sizes().SerializeToString()
    so = ort.SessionOptions()
    if via == "python":
        so = ortcustom.session_options(ortcustom.Domain("com.microsoft").add(Inverse))
    else:
        so.register_custom_ops_library(ortcustom.get_library_path())
    sess = ort.InferenceSession(m, so, providers=CPU)
    rng = np.random.default_rng(5)
    for n, k in [(1, 8), (2, 3), (1, 16), (3, 5)]:
        x = well_conditioned(rng, (n, k, k), np.float32)
        s1, s2, y2 = sess.run(None, {"X": x})
        assert y2.shape == (n, 2 * k, 2 * k)
        np.testing.assert_allclose(s1, kernels.inverse(x).sum(), rtol=1e-4, atol=1e-4)
