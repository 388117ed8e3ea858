"""Constant inputs (`Input(..., constant=True)`): the kernel's create step reads the input's value once
(a vocabulary, a table), in a session, a plain library loaded by Python without ortcustom and by a C
host, and a direct call (created once per distinct value). A model that gives it as anything but an
initializer is refused at session creation, naming the op, the node and the input."""
from __future__ import annotations

import os
import shutil
import sys
import textwrap

import numpy as np
import onnxruntime as ort
import pytest

import ortcustom
from ortcustom import Domain, Input, Op, Output, kernels
from ortcustom.testing import make_model
from c_host import no_c_library_reason, run_host
from helpers import CPU
from plain_library import build_library, without_ortcustom

HERE = os.path.dirname(__file__)
DECLARATIONS = textwrap.dedent("""
    from ortcustom import Domain, Input, Op, Output

    Lookup = Op("Lookup", [Input("X", "string"), Input("vocab", "string", constant=True)],
                [Output("Y", "int64", shape="X")], native="constops._kernels:vocab_lookup")
    SumScale = Op("SumScale", [Input("X", "float"), Input("weights", "float", optional=True, constant=True)],
                  [Output("Y", "float", shape="X")], native="constops._kernels:sum_scale")
    domain = Domain("constops").add(Lookup, SumScale)
""")
PATHS = ["session", "library", pytest.param("c_host", marks=pytest.mark.skipif(
    no_c_library_reason() is not None, reason=str(no_c_library_reason()))), "direct"]
VOCAB = np.array(["[UNK]", "the", "caf\u00e9", "\u4e16\u754c", ""], dtype=object)
X = np.array([["the", "caf\u00e9"], ["nope", ""]], dtype=object)


@pytest.fixture(scope="module")
def constops(tmp_path_factory):
    if shutil.which(os.environ.get("CXX", "g++")) is None:
        pytest.skip("no C++ compiler (g++, or $CXX)")
    src = tmp_path_factory.mktemp("const") / "src"
    (src / "constops").mkdir(parents=True)
    (src / "constops" / "__init__.py").write_text(DECLARATIONS)
    lib = build_library(src, "constops:domain", [os.path.join(HERE, "native", "constant_kernels.cpp")],
                        src / "constops" / "_kernels.so")
    sys.path.insert(0, str(src))
    import constops

    yield constops, lib
    sys.path.remove(str(src))
    for name in [n for n in sys.modules if n.split(".")[0] == "constops"]:
        del sys.modules[name]


def model(op, domain, feeds, constants):
    """A one-node model of `op` whose `constants` (name -> array) are initializers."""
    return make_model(op, domain, {**feeds, **{k: np.asarray(v) for k, v in constants.items()}},
                      initializers=constants)


def outcome(path, pkg, lib, op, feeds, constants, tmp_path, as_input=False):
    """("ok", Y) or ("error", the message); as_input: the constants are graph inputs instead."""
    if path == "direct":
        try:
            return "ok", kernels.call(op, *feeds.values(), *constants.values())
        except Exception as e:
            return "error", f"{type(e).__name__}: {e}"
    m = make_model(op, pkg.domain, {**feeds, **constants}) if as_input else model(op, pkg.domain, feeds, constants)
    run_feeds = {**feeds, **constants} if as_input else feeds
    if path == "session":
        try:
            sess = ort.InferenceSession(m.SerializeToString(), ortcustom.session_options(pkg.domain), providers=CPU)
            return "ok", sess.run(None, run_feeds)[0]
        except Exception as e:
            return "error", str(e)
    if path == "c_host":
        r = run_host(m, run_feeds, libraries=[lib])
        assert r.returncode in (0, 4, 5), r.stdout + r.stderr
        return ("ok", r.outputs["Y"]) if r.returncode == 0 else ("error", r.error)
    text = {k: np.asarray(v).astype(str) if np.asarray(v).dtype == object else v for k, v in run_feeds.items()}
    r = without_ortcustom([lib], m, text, tmp_dir=tmp_path)  # (npz: str arrays, not objects)
    return ("ok", r["outputs"][0]) if r["failed"] is None else ("error", r["error"])


@pytest.mark.parametrize("path", PATHS)
def test_create_reads_a_constant_string_input(path, constops, tmp_path):
    pkg, lib = constops
    kind, y = outcome(path, pkg, lib, pkg.Lookup, {"X": X}, {"vocab": VOCAB}, tmp_path)
    assert kind == "ok", y
    assert y.tolist() == [[1, 2], [-1, 4]]


@pytest.mark.parametrize("path", PATHS)
def test_an_optional_constant_input_absent_or_given(path, constops, tmp_path):
    pkg, lib = constops
    x = np.arange(4, dtype=np.float32)
    kind, y = outcome(path, pkg, lib, pkg.SumScale, {"X": x}, {"weights": np.array([0.5, 2.5], np.float32)}, tmp_path)
    assert kind == "ok" and y.tolist() == (x * 3).tolist(), y
    if path == "direct":
        assert kernels.call(pkg.SumScale, x).tolist() == x.tolist()
    else:
        m = make_model(pkg.SumScale, pkg.domain, {"X": x, "weights": None})
        sess = ort.InferenceSession(m.SerializeToString(), ortcustom.session_options(pkg.domain), providers=CPU)
        assert sess.run(None, {"X": x})[0].tolist() == x.tolist()


@pytest.mark.parametrize("path", [p for p in PATHS if p != "direct"])
def test_a_constant_input_given_as_a_graph_input_is_refused(path, constops, tmp_path):
    pkg, lib = constops
    kind, got = outcome(path, pkg, lib, pkg.Lookup, {"X": X}, {"vocab": VOCAB}, tmp_path, as_input=True)
    assert kind == "error" and ("Lookup (node 'n0'): input vocab must be an initializer of the model (a constant): "
                                "the kernel reads it when it is created") in got, got
    kind, y = outcome(path, pkg, lib, pkg.Lookup, {"X": X}, {"vocab": VOCAB}, tmp_path)  # the next one works
    assert kind == "ok" and y.tolist() == [[1, 2], [-1, 4]]


def test_a_direct_call_creates_once_per_value(constops):
    pkg, _ = constops
    assert kernels.call(pkg.Lookup, X, VOCAB).tolist() == [[1, 2], [-1, 4]]
    other = np.array(["", "nope", "the"], dtype=object)
    assert kernels.call(pkg.Lookup, X, other).tolist() == [[2, -1], [1, 0]]
    # elements holding NULs are values of their own ("a\0" + "b" is not "a" + "\0b")
    assert kernels.call(pkg.Lookup, np.array(["a\0"], object), np.array(["a\0", "b"], object)).tolist() == [0]
    assert kernels.call(pkg.Lookup, np.array(["a\0"], object), np.array(["a", "\0b"], object)).tolist() == [-1]
    w = np.array([1.0], np.float32)
    assert kernels.call(pkg.SumScale, np.ones(2, np.float32), w).tolist() == [1.0, 1.0]
    w[0] = 4.0  # the same array, another value: created again
    assert kernels.call(pkg.SumScale, np.ones(2, np.float32), w).tolist() == [4.0, 4.0]


def test_a_constant_string_input_that_is_not_utf8_is_refused_at_creation(constops):
    pkg, _ = constops
    bad = np.array([b"ok", b"\xff"], dtype=object)
    m = model(pkg.Lookup, pkg.domain, {"X": X}, {"vocab": bad})
    with pytest.raises(Exception, match=r"Lookup \(node 'n0'\): input vocab element 1 is not UTF-8 \(byte 0 is 0xff\)"):
        ort.InferenceSession(m.SerializeToString(), ortcustom.session_options(pkg.domain), providers=CPU)
    with pytest.raises(ValueError, match=r"Lookup: input vocab element 1 is not UTF-8"):
        kernels.call(pkg.Lookup, X, bad)


def test_python_ops_get_the_same_check():
    op = Op("PyLookup", [Input("X", "string"), Input("vocab", "string", constant=True)],
            [Output("Y", "int64", shape="X")],
            compute=lambda X, vocab: np.vectorize(lambda s: list(vocab).index(s) if s in vocab else -1,
                                                  otypes=[np.int64])(X))
    d = Domain("test.pyconst").add(op)
    sess = ort.InferenceSession(model(op, d, {"X": X}, {"vocab": VOCAB}).SerializeToString(),
                                ortcustom.session_options(d), providers=CPU)
    assert sess.run(None, {"X": X})[0].tolist() == [[1, 2], [-1, 4]]
    with pytest.raises(Exception, match="PyLookup \\(node 'n0'\\): input vocab must be an initializer"):
        ort.InferenceSession(make_model(op, d, {"X": X, "vocab": VOCAB}).SerializeToString(),
                             ortcustom.session_options(d), providers=CPU)


def test_a_variadic_input_cannot_be_constant():
    with pytest.raises(ValueError, match="input 'xs': a variadic input cannot be constant"):
        Input("xs", "float", variadic=True, constant=True)
