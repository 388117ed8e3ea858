"""A `strings` attribute (ONNX AttributeProto STRINGS), in every path: a native kernel gets
`count` elements, each `lengths[j]` bytes then a NUL (a session, a plain library loaded by Python
without ortcustom and by a C host, a direct call); a Python kernel gets a tuple of str (or of bytes
with bytes=True); the schema's default, shape inference and the reference agree. ORT's C API reads
a strings attribute from ORT 1.25 on (KernelInfoGetAttributeArray_string), each element up to its
first NUL: a session on an older ORT is refused naming the op, the attribute and the version."""
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
from onnx.reference import ReferenceEvaluator

import ortcustom
from ortcustom import Attr, Domain, Input, Op, Output, kernels
from ortcustom.testing import make_model
from c_host import no_c_library_reason, run_host
from helpers import CPU, run_python

_ORT = tuple(int(x) for x in ort.__version__.split(".")[:2])
# ORT reads a strings attribute from 1.25 on (KernelInfoGetAttributeArray_string); older: refused at session creation
pytestmark = pytest.mark.skipif(_ORT < (1, 25), reason=f"onnxruntime {ort.__version__} cannot read a strings attribute (needs 1.25)")
from plain_library import build_library

HERE = os.path.dirname(__file__)
DEFAULT = ("d\u00e9f", "", "\u4e16")
DECLARATIONS = textwrap.dedent(f"""
    from ortcustom import Attr, Domain, Input, Op, Output

    AttrStrings = Op("AttrStrings", [Input("X", "float")], [Output("Y", "uint8")],
                     attrs=[Attr("words", "strings", default={DEFAULT!r})],
                     native="wordops._kernels:attr_strings")
    Needs = Op("Needs", [Input("X", "float")], [Output("Y", "uint8")],
               attrs=[Attr("words", "strings")], native="wordops._kernels:attr_strings")
    domain = Domain("wordops").add(AttrStrings, Needs)
""")
PATHS = ["session", "library", pytest.param("c_host", marks=pytest.mark.skipif(
    no_c_library_reason() is not None, reason=str(no_c_library_reason()))), "direct"]
X = np.zeros((2,), np.float32)


@pytest.fixture(scope="module")
def wordops(tmp_path_factory):
    if shutil.which(os.environ.get("CXX", "g++")) is None:
        pytest.skip("no C++ compiler (g++, or $CXX)")
    src = tmp_path_factory.mktemp("words") / "src"
    (src / "wordops").mkdir(parents=True)
    (src / "wordops" / "__init__.py").write_text(DECLARATIONS)
    lib = build_library(src, "wordops:domain", [os.path.join(HERE, "native", "attr_bytes_kernels.cpp")],
                        src / "wordops" / "_kernels.so")
    sys.path.insert(0, str(src))
    import wordops

    yield wordops, lib
    sys.path.remove(str(src))
    for name in [n for n in sys.modules if n.split(".")[0] == "wordops"]:
        del sys.modules[name]


LIBRARY_RUN = textwrap.dedent("""
    import sys, numpy as np, onnxruntime as ort
    so = ort.SessionOptions()
    so.register_custom_ops_library(LIB)
    try:
        sess = ort.InferenceSession(MODEL, so, providers=["CPUExecutionProvider"])
        print("RESULT", sess.run(None, {"X": np.zeros((2,), np.float32)})[0].tolist())
    except Exception as e:
        print("ERROR", str(e).replace("\\\\n", " "))
    assert "ortcustom" not in sys.modules
""")


def outcome(path, pkg, lib, op, attrs, tmp_path, extra=()):
    """("ok", Y's bytes) or ("error", the message)."""
    if path == "direct":
        try:
            return "ok", kernels.call(op, X, **attrs).tobytes()
        except Exception as e:
            return "error", f"{type(e).__name__}: {e}"
    m = make_model(op, pkg.domain, {"X": X}, attrs=attrs)
    m.graph.node[0].attribute.extend(extra)
    if path == "session":
        try:
            sess = ort.InferenceSession(m.SerializeToString(), ortcustom.session_options(pkg.domain), providers=CPU)
            return "ok", sess.run(None, {"X": X})[0].tobytes()
        except Exception as e:
            return "error", str(e)
    if path == "c_host":
        r = run_host(m, {"X": X}, libraries=[lib])
        assert r.returncode in (0, 4, 5), r.stdout + r.stderr
        return ("ok", r.outputs["Y"].tobytes()) if r.returncode == 0 else ("error", r.error)
    (tmp_path / "m.onnx").write_bytes(m.SerializeToString())
    r = run_python(LIBRARY_RUN.replace("LIB", repr(str(lib))).replace("MODEL", repr(str(tmp_path / "m.onnx"))))
    assert r.returncode == 0, r.stdout + r.stderr
    line = next(l for l in r.stdout.splitlines() if l.startswith(("RESULT", "ERROR")))
    return ("ok", bytes(json.loads(line[7:]))) if line.startswith("RESULT") else ("error", line[6:])


def joined(words) -> bytes:
    return b"".join((w.encode() if isinstance(w, str) else w) + b"|" for w in words)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("words", [["a", "bc", "h\u00e9llo \u4e16\u754c"], [""], ["x" * 100000, "", "y"],
                                   [str(i) for i in range(1000)]])
def test_a_native_kernel_reads_a_strings_attribute(path, words, wordops, tmp_path):
    pkg, lib = wordops
    assert outcome(path, pkg, lib, pkg.AttrStrings, {"words": words}, tmp_path) == ("ok", joined(words))


@pytest.mark.parametrize("path", PATHS)
def test_a_strings_default_reaches_the_kernel(path, wordops, tmp_path):
    pkg, lib = wordops
    assert outcome(path, pkg, lib, pkg.AttrStrings, {}, tmp_path) == ("ok", joined(DEFAULT))


@pytest.mark.parametrize("path", [p for p in PATHS if p != "direct"])
def test_a_required_strings_attribute_missing_or_of_another_kind_is_refused(path, wordops, tmp_path):
    pkg, lib = wordops
    kind, got = outcome(path, pkg, lib, pkg.Needs, {}, tmp_path)
    assert kind == "error" and "Needs (node 'n0'): required attribute 'words' (strings) is missing" in got, got
    kind, got = outcome(path, pkg, lib, pkg.Needs, {}, tmp_path, extra=[helper.make_attribute("words", [1, 2])])
    assert kind == "error" and "attribute 'words' must be of type strings, but the node gives an ints" in got, got


def test_an_int_given_as_strings_names_strings():
    """ORT >= 1.25 reads strings: the message says what the node holds."""
    op = Op("TakesInt", [Input("X", "float")], [Output("Y", "uint8")], attrs=[Attr("n", "int")],
            compute=lambda X, n: np.zeros(1, np.uint8))
    d = Domain("wordops2").add(op)
    m = make_model(op, d, {"X": X})
    m.graph.node[0].attribute.extend([helper.make_attribute("n", ["a", "b"])])
    with pytest.raises(Exception, match="attribute 'n' must be of type int, but the node gives strings"):
        ort.InferenceSession(m.SerializeToString(), ortcustom.session_options(d), providers=CPU)


def test_a_direct_call_checks_a_strings_value(wordops):
    pkg, _ = wordops
    with pytest.raises(TypeError, match="AttrStrings: attribute words: expected a sequence of strings"):
        kernels.call(pkg.AttrStrings, X, words="abc")
    with pytest.raises(ValueError, match="AttrStrings: attribute words: value b'\\\\xff' is not UTF-8 text"):
        kernels.call(pkg.AttrStrings, X, words=[b"\xff"])
    # a NUL inside an element reaches a native kernel in a direct call (ORT's C API stops at it)
    assert kernels.call(pkg.AttrStrings, X, words=["a\x00b"]).tobytes() == b"a\x00b|"


# ---- Python kernels, the schema, the reference -----------------------------------------------------

def words_op(name, attr):
    def compute(X, words):
        return np.frombuffer(repr(words).encode(), np.uint8).copy()

    def shape(shapes, attrs):
        return (len(repr(attrs["words"]).encode()),)

    return Op(name, [Input("X", "float")], [Output("Y", "uint8", shape=shape)], attrs=[attr], compute=compute)


@pytest.mark.parametrize("raw", [False, True])
def test_a_python_kernel_gets_a_tuple_in_a_session_and_the_reference(raw):
    words = ("a", "h\u00e9", "")
    want = tuple(w.encode() for w in words) if raw else words
    op = words_op("PyWords" + str(raw), Attr("words", "strings", default=("z",), bytes=raw))
    d = Domain("pywords." + str(raw)).add(op)
    for attrs, expect in (({"words": list(words)}, want), ({}, (b"z",) if raw else ("z",))):
        m = make_model(op, d, {"X": X}, attrs=attrs, outputs={"Y": (np.uint8, None)})
        sess = ort.InferenceSession(m.SerializeToString(), ortcustom.session_options(d), providers=CPU)
        assert sess.run(None, {"X": X})[0].tobytes() == repr(expect).encode()
        ref = ReferenceEvaluator(m, new_ops=ortcustom.reference_ops(d)).run(None, {"X": X})[0]
        assert ref.tobytes() == repr(expect).encode()
        from onnx import shape_inference
        inferred = shape_inference.infer_shapes(m)
        assert inferred.graph.output[0].type.tensor_type.shape.dim[0].dim_value == len(repr(expect).encode())


def test_a_python_kernel_refuses_strings_that_are_not_text():
    op = words_op("PyWordsBad", Attr("words", "strings", default=()))
    d = Domain("pywords.bad").add(op)
    m = make_model(op, d, {"X": X}, attrs={"words": [b"ok", b"\xc3("]})
    with pytest.raises(Exception, match=r"PyWordsBad \(node 'n0'\): attribute words: the node's value b'\\xc3\('"
                                        r" is not UTF-8 text \(byte 0xc3 at offset 0\)"):
        ort.InferenceSession(m.SerializeToString(), ortcustom.session_options(d), providers=CPU)


def test_the_schema_carries_the_strings_default():
    op = words_op("SchemaWords", Attr("words", "strings", default=("p", "q")))
    d = Domain("pywords.schema").add(op)
    from ortcustom import schemas
    schemas.register(d)
    import onnx
    schema = onnx.defs.get_schema("SchemaWords", 1, d.name)
    a = schema.attributes["words"]
    assert a.type == onnx.defs.OpSchema.AttrType.STRINGS
    assert list(a.default_value.strings) == [b"p", b"q"]
    onnx.checker.check_model(make_model(op, d, {"X": X}, attrs={"words": ["r"]}, outputs={"Y": (np.uint8, ["n"])}),
                             full_check=True)
