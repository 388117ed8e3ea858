"""The glue's checks at the edges, the same in every path: a session from Python
(ortcustom.session_options), a package's plain library from a Python process without ortcustom and
from a C host, and a direct call (ortcustom.kernels.call). Kernels: tests/native/edge_kernels.cpp,
built with a table generated from the declarations below, as a package's build does.

- scratch memory of a size computed negative (a huge size_t): "no scratch memory of N bytes"
  (the 64-byte round-up once wrapped it to 0, and the kernel got OC_OK and a 0-byte block);
- int attribute bounds compared exactly as int64 (as doubles, max=2**53 let 2**53 + 1 through);
- an attribute given as a tensor, a graph, strings...: an error saying so (it was taken as missing:
  a required one "missing", an optional one silently its default, an ints one silently empty);
- an output too big to allocate: an error naming the op and the output (a direct call gave NumPy's
  "array is too big", naming nothing)."""
from __future__ import annotations

import json
import os
import shutil
import sys
import textwrap

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import ortcustom
from ortcustom import kernels
from ortcustom.testing import make_model
from c_host import no_c_library_reason, run_host
from helpers import CPU, run_python
from plain_library import build_library

HERE = os.path.dirname(__file__)
DECLARATIONS = textwrap.dedent("""
    from ortcustom import Attr, Domain, Input, Op, Output

    ScratchOf = Op("ScratchOf", [Input("X", "float")], [Output("Y", "float", shape="X")],
                   attrs=[Attr("bytes", "int")], native="edgeops._kernels:scratch_of")
    IntBounds = Op("IntBounds", [Input("X", "float")], [Output("Y", "float", shape="X")],
                   attrs=[Attr("k", "int", default=0, min=-2**53, max=2**53), Attr("ks", "ints", default=(1,)),
                          Attr("tag", "string", default="")],
                   native="edgeops._kernels:int_bounds")
    Sized = Op("Sized", [Input("X", "float")], [Output("Y", "float")], attrs=[Attr("n", "int")],
               native="edgeops._kernels:sized")
    domain = Domain("edgeops").add(ScratchOf, IntBounds, Sized)
""")
PATHS = ["session", "library", pytest.param("c_host", marks=pytest.mark.skipif(
    no_c_library_reason() is not None, reason=str(no_c_library_reason()))), "direct"]
X = np.arange(6, dtype=np.float32).reshape(2, 3)


@pytest.fixture(scope="module")
def edgeops(tmp_path_factory):
    if shutil.which(os.environ.get("CXX", "g++")) is None:
        pytest.skip("no C++ compiler (g++, or $CXX)")
    src = tmp_path_factory.mktemp("edge") / "src"
    (src / "edgeops").mkdir(parents=True)
    (src / "edgeops" / "__init__.py").write_text(DECLARATIONS)
    lib = build_library(src, "edgeops:domain", [os.path.join(HERE, "native", "edge_kernels.cpp")],
                        src / "edgeops" / "_kernels.so")
    sys.path.insert(0, str(src))
    import edgeops

    yield edgeops, lib
    sys.path.remove(str(src))
    for name in [n for n in sys.modules if n.split(".")[0] == "edgeops"]:
        del sys.modules[name]


def model(op, domain, attrs=None, extra=()):
    """One node of `op` on X; `extra`: AttributeProtos added as they are (any kind)."""
    m = make_model(op, domain, {"X": X}, attrs=attrs)
    m.graph.node[0].attribute.extend(extra)
    return m


LIBRARY_RUN = textwrap.dedent("""
    import sys, numpy as np, onnxruntime as ort
    so = ort.SessionOptions()
    so.register_custom_ops_library(sys.argv[1])
    try:
        sess = ort.InferenceSession(sys.argv[2], so, providers=["CPUExecutionProvider"])
        y = sess.run(None, {"X": np.arange(6, dtype=np.float32).reshape(2, 3)})[0]
        print("RESULT", y.ravel().tolist())
    except Exception as e:
        print("ERROR", str(e).replace("\\n", " "))
    assert "ortcustom" not in sys.modules
""")


def outcome(path, pkg, lib, op, attrs=None, extra=(), tmp_path=None):
    """("ok", Y as a list) or ("error", its message), by `path`."""
    if path == "direct":
        if extra:
            pytest.skip("a direct call takes attributes as Python values")
        try:
            return "ok", kernels.call(op, X, **(attrs or {})).ravel().tolist()
        except Exception as e:
            return "error", f"{type(e).__name__}: {e}"
    m = model(op, pkg.domain, attrs, extra)
    if path == "session":
        try:
            sess = ort.InferenceSession(m.SerializeToString(), ortcustom.session_options(pkg.domain), providers=CPU)
            return "ok", sess.run(None, {"X": X})[0].ravel().tolist()
        except Exception as e:
            return "error", str(e)
    if path == "c_host":
        r = run_host(m, {"X": X}, libraries=[lib])
        assert r.returncode in (0, 4, 5), r.stdout + r.stderr  # ok, session creation, run: no crash
        return ("ok", r.outputs["Y"].ravel().tolist()) if r.returncode == 0 else ("error", r.error)
    path_ = tmp_path / "m.onnx"
    path_.write_bytes(m.SerializeToString())
    r = run_python(LIBRARY_RUN.replace("sys.argv[1]", repr(str(lib))).replace("sys.argv[2]", repr(str(path_))))
    assert r.returncode == 0, r.stdout + r.stderr
    line = next(l for l in r.stdout.splitlines() if l.startswith(("RESULT", "ERROR")))
    return ("ok", json.loads(line[7:])) if line.startswith("RESULT") else ("error", line[6:])


def where(path, op):
    return f"{op} (node 'n0'): " if path != "direct" else f"{op}: "


# ---- scratch memory ------------------------------------------------------------------------------

@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("bytes_", [-1, -63, -2**63, 2**62])
def test_scratch_of_an_impossible_size_is_refused(path, bytes_, edgeops, tmp_path):
    pkg, lib = edgeops
    kind, got = outcome(path, pkg, lib, pkg.ScratchOf, {"bytes": bytes_}, tmp_path=tmp_path)
    assert kind == "error", got
    assert where(path, "ScratchOf") + f"no scratch memory of {bytes_ % 2**64} bytes" in got


@pytest.mark.parametrize("path", PATHS)
def test_scratch_of_an_ordinary_size_works(path, edgeops, tmp_path):
    pkg, lib = edgeops
    assert outcome(path, pkg, lib, pkg.ScratchOf, {"bytes": 1000}, tmp_path=tmp_path) == ("ok", X.ravel().tolist())


# ---- int bounds, exactly -------------------------------------------------------------------------

@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("k, why", [(2**53 + 1, "must be <= 9007199254740992"),
                                    (-2**53 - 1, "must be >= -9007199254740992"),
                                    (2**63 - 1, "must be <= 9007199254740992")])
def test_int_bounds_are_exact(path, k, why, edgeops, tmp_path):
    pkg, lib = edgeops
    kind, got = outcome(path, pkg, lib, pkg.IntBounds, {"k": k}, tmp_path=tmp_path)
    assert kind == "error", got
    assert where(path, "IntBounds") + f"attribute k={k} is invalid: {why}" in got


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("k", [2**53, -2**53, 5])
def test_int_bounds_let_the_bounds_themselves_through(path, k, edgeops, tmp_path):
    pkg, lib = edgeops
    kind, got = outcome(path, pkg, lib, pkg.IntBounds, {"k": k}, tmp_path=tmp_path)
    assert kind == "ok", got
    assert got == (X + np.float32(k) + 1).ravel().tolist()


# ---- attributes of a kind no op declares ---------------------------------------------------------

SUBGRAPH = helper.make_graph([helper.make_node("Identity", ["a"], ["b"])], "sub",
                             [helper.make_tensor_value_info("a", TensorProto.FLOAT, [1])],
                             [helper.make_tensor_value_info("b", TensorProto.FLOAT, [1])])
OTHER_KIND = ("another kind (a graph, a sparse tensor, a type, or strings where ONNX Runtime is older than 1.25: "
              "no int, float, string, ints, floats or strings)")
FOREIGN = {
    "tensor": (lambda name: helper.make_attribute(name, helper.make_tensor("t", TensorProto.INT64, [1], [3])),
               "a tensor"),
    "graph": (lambda name: helper.make_attribute(name, SUBGRAPH), OTHER_KIND),
    "strings": (lambda name: helper.make_attribute(name, [b"a", b"b"]), "strings"),  # read from ORT 1.25 on
}


@pytest.mark.parametrize("path", [p for p in PATHS if p != "direct"])
@pytest.mark.parametrize("given", list(FOREIGN))
def test_an_int_attribute_of_another_kind_is_never_the_default(path, given, edgeops, tmp_path):
    pkg, lib = edgeops
    make, what = FOREIGN[given]
    if given == "strings" and tuple(int(x) for x in ort.__version__.split(".")[:2]) < (1, 25):
        what = OTHER_KIND  # an older ORT cannot tell strings from the kinds it cannot read
    kind, got = outcome(path, pkg, lib, pkg.IntBounds, extra=[make("k")], tmp_path=tmp_path)
    assert kind == "error", got  # was: k silently its default, 0
    assert where(path, "IntBounds") + f"attribute 'k' must be of type int, but the node gives {what}" in got


@pytest.mark.parametrize("path", [p for p in PATHS if p != "direct"])
def test_a_required_attribute_given_as_a_tensor_is_not_called_missing(path, edgeops, tmp_path):
    pkg, lib = edgeops
    kind, got = outcome(path, pkg, lib, pkg.ScratchOf, extra=[FOREIGN["tensor"][0]("bytes")], tmp_path=tmp_path)
    assert kind == "error"
    assert where(path, "ScratchOf") + "attribute 'bytes' must be of type int, but the node gives a tensor" in got
    assert "missing" not in got


@pytest.mark.parametrize("path", [p for p in PATHS if p != "direct"])
def test_an_ints_attribute_given_as_a_tensor_is_not_an_empty_list(path, edgeops, tmp_path):
    pkg, lib = edgeops
    kind, got = outcome(path, pkg, lib, pkg.IntBounds, extra=[FOREIGN["tensor"][0]("ks")], tmp_path=tmp_path)
    assert kind == "error", got  # was: ks = () silently
    assert where(path, "IntBounds") + "attribute 'ks' must be of type ints, but the node gives a tensor" in got


@pytest.mark.parametrize("path", [p for p in PATHS if p != "direct"])
def test_an_empty_ints_attribute_is_still_an_empty_list(path, edgeops, tmp_path):
    pkg, lib = edgeops
    empty = helper.make_attribute("ks", [], attr_type=helper.AttributeProto.INTS)
    assert outcome(path, pkg, lib, pkg.IntBounds, extra=[empty], tmp_path=tmp_path) == ("ok", X.ravel().tolist())


def test_a_direct_call_refuses_an_array_for_an_int_attribute(edgeops):
    pkg, _ = edgeops
    with pytest.raises(TypeError, match="IntBounds: attribute k: expected an int"):
        kernels.call(pkg.IntBounds, X, k=np.array([3]))


# ---- an output too big for any memory ------------------------------------------------------------

@pytest.mark.parametrize("path", PATHS)
def test_an_output_too_big_to_allocate_names_the_op(path, edgeops, tmp_path):
    pkg, lib = edgeops
    kind, got = outcome(path, pkg, lib, pkg.Sized, {"n": 2**62}, tmp_path=tmp_path)
    assert kind == "error", got
    assert where(path, "Sized") in got
    if path == "direct":
        assert got.startswith("MemoryError: Sized: output Y of shape (4611686018427387904,) (float32) cannot be "
                              "allocated: ValueError: "), got


def test_a_direct_call_refuses_a_string_utf8_cannot_carry(edgeops):
    pkg, _ = edgeops
    with pytest.raises(ValueError, match=r"^IntBounds: attribute tag: the value '\\ud800' is not text UTF-8 can encode"):
        kernels.call(pkg.IntBounds, X, tag="\ud800")
