"""A string attribute is bytes in ONNX (ORT's own tests pass a serialized blob so; SentencePiece's
model is one): every kernel gets it exactly as stored. Native kernels get `count` bytes (embedded
NULs, any byte) in every path: a session, a plain library loaded by Python without ortcustom and by a
C host, a direct call. Python kernels get `bytes` when the attribute says `bytes=True`, else text
(`str`), and bytes that are not UTF-8 text are refused with the op, the attribute and the offending
byte (they were decoded with replacement characters, and a direct call raised a raw
UnicodeDecodeError)."""
from __future__ import annotations

import json
import os
import shutil
import sys
import textwrap

import numpy as np
import onnxruntime as ort
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

import ortcustom
from ortcustom import Attr, Domain, Input, Op, Output, kernels
from ortcustom.testing import make_model
from c_host import no_c_library_reason, run_host
from helpers import CPU, run_python
from plain_library import build_library

HERE = os.path.dirname(__file__)
BLOB = b"\x00\xff\xfe model\x00bytes \x80\n"  # NULs, bytes no UTF-8 text holds
DEFAULT = b"\x01\x00\xc3("  # an invalid UTF-8 sequence, a NUL: the plain library's table keeps them
DECLARATIONS = textwrap.dedent(f"""
    from ortcustom import Attr, Domain, Input, Op, Output

    AttrBytes = Op("AttrBytes", [Input("X", "float")], [Output("Y", "uint8")],
                   attrs=[Attr("blob", "string", default={DEFAULT!r}, bytes=True)],
                   native="blobops._kernels:attr_bytes")
    AttrText = Op("AttrText", [Input("X", "float")], [Output("Y", "uint8")],
                  attrs=[Attr("blob", "string", default="")], native="blobops._kernels:attr_bytes")
    domain = Domain("blobops").add(AttrBytes, AttrText)
""")
PATHS = ["session", "library", pytest.param("c_host", marks=pytest.mark.skipif(
    no_c_library_reason() is not None, reason=str(no_c_library_reason()))), "direct"]
X = np.zeros((2,), np.float32)


@pytest.fixture(scope="module")
def blobops(tmp_path_factory):
    if shutil.which(os.environ.get("CXX", "g++")) is None:
        pytest.skip("no C++ compiler (g++, or $CXX)")
    src = tmp_path_factory.mktemp("blob") / "src"
    (src / "blobops").mkdir(parents=True)
    (src / "blobops" / "__init__.py").write_text(DECLARATIONS)
    lib = build_library(src, "blobops:domain", [os.path.join(HERE, "native", "attr_bytes_kernels.cpp")],
                        src / "blobops" / "_kernels.so")
    sys.path.insert(0, str(src))
    import blobops

    yield blobops, lib
    sys.path.remove(str(src))
    for name in [n for n in sys.modules if n.split(".")[0] == "blobops"]:
        del sys.modules[name]


LIBRARY_RUN = textwrap.dedent("""
    import sys, numpy as np, onnxruntime as ort
    so = ort.SessionOptions()
    so.register_custom_ops_library(LIB)
    sess = ort.InferenceSession(MODEL, so, providers=["CPUExecutionProvider"])
    print("RESULT", sess.run(None, {"X": np.zeros((2,), np.float32)})[0].tolist())
    assert "ortcustom" not in sys.modules
""")


def native_bytes(path, pkg, lib, attrs, tmp_path) -> bytes:
    if path == "direct":
        return kernels.call(pkg.AttrBytes, X, **attrs).tobytes()
    m = make_model(pkg.AttrBytes, pkg.domain, {"X": X}, attrs=attrs)
    if path == "session":
        sess = ort.InferenceSession(m.SerializeToString(), ortcustom.session_options(pkg.domain), providers=CPU)
        return sess.run(None, {"X": X})[0].tobytes()
    if path == "c_host":
        r = run_host(m, {"X": X}, libraries=[lib])
        assert r.returncode == 0, r.stdout + r.stderr
        return r.outputs["Y"].tobytes()
    (tmp_path / "m.onnx").write_bytes(m.SerializeToString())
    r = run_python(LIBRARY_RUN.replace("LIB", repr(str(lib))).replace("MODEL", repr(str(tmp_path / "m.onnx"))))
    assert r.returncode == 0, r.stdout + r.stderr
    line = next(l for l in r.stdout.splitlines() if l.startswith("RESULT"))
    return bytes(json.loads(line[7:]))


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("blob", [BLOB, b"", b"\x00", "h\u00e9llo \u4e16\u754c".encode(), bytes(range(256)) * 300])
def test_a_native_kernel_gets_the_exact_bytes(path, blob, blobops, tmp_path):
    pkg, lib = blobops
    assert native_bytes(path, pkg, lib, {"blob": blob}, tmp_path) == blob


@pytest.mark.parametrize("path", PATHS)
def test_a_native_kernel_gets_the_exact_default(path, blobops, tmp_path):
    """The default as declared: the plain library's generated table keeps NULs and any byte."""
    pkg, lib = blobops
    assert native_bytes(path, pkg, lib, {}, tmp_path) == DEFAULT


def test_a_direct_call_takes_text_for_a_bytes_attribute_as_utf8(blobops):
    pkg, _ = blobops
    assert kernels.call(pkg.AttrBytes, X, blob="h\u00e9").tobytes() == "h\u00e9".encode()
    with pytest.raises(TypeError, match="AttrBytes: attribute blob: expected bytes"):
        kernels.call(pkg.AttrBytes, X, blob=3)


def test_a_direct_call_refuses_bytes_that_are_not_text_for_a_text_attribute(blobops):
    """Was a raw UnicodeDecodeError naming nothing. (A session hands a native kernel the node's
    bytes as they are: ORT carries bytes, and the kernel reads `count` of them.)"""
    pkg, lib = blobops
    with pytest.raises(ValueError) as e:
        kernels.call(pkg.AttrText, X, blob=BLOB)
    assert not isinstance(e.value, UnicodeDecodeError)
    assert str(e.value).startswith("AttrText: attribute blob: value ")
    assert "is not UTF-8 text (byte 0xff at offset 1); declare the attribute with bytes=True" in str(e.value)
    assert kernels.call(pkg.AttrText, X, blob="fine".encode()).tobytes() == b"fine"  # text as bytes: taken
    m = make_model(pkg.AttrText, pkg.domain, {"X": X}, attrs={"blob": BLOB})
    sess = ort.InferenceSession(m.SerializeToString(), ortcustom.session_options(pkg.domain), providers=CPU)
    assert sess.run(None, {"X": X})[0].tobytes() == BLOB


# ---- Python kernels ------------------------------------------------------------------------------

def seen_op(name, attr):
    """A Python op whose Y holds what its kernel got as `blob`: its type name, then its bytes."""
    def compute(X, blob):
        raw = blob.encode("utf-8") if isinstance(blob, str) else blob
        return np.frombuffer(type(blob).__name__.encode() + b":" + raw, np.uint8).copy()

    return Op(name, [Input("X", "float")], [Output("Y", "uint8")], attrs=[attr], compute=compute)


def python_paths(op, attrs, reference=True):
    """{path: what the kernel got, or the error}: a session and ONNX's ReferenceEvaluator (which
    decodes a string attribute as UTF-8 itself: text only)."""
    d = Domain("pyblob." + op.name.lower()).add(op)
    out = {}
    m = make_model(op, d, {"X": X}, attrs=attrs, outputs={"Y": (np.uint8, None)})
    try:
        sess = ort.InferenceSession(m.SerializeToString(), ortcustom.session_options(d), providers=CPU)
        out["session"] = sess.run(None, {"X": X})[0].tobytes()
    except Exception as e:
        out["session"] = e
    if reference:
        out["reference"] = ReferenceEvaluator(m, new_ops=ortcustom.reference_ops(d)).run(None, {"X": X})[0].tobytes()
    return out


def test_a_python_kernel_asking_for_bytes_gets_them_exactly():
    op = seen_op("PyBytes", Attr("blob", "string", default=b"", bytes=True))
    assert python_paths(op, {"blob": BLOB}, reference=False) == {"session": b"bytes:" + BLOB}
    assert python_paths(op, {"blob": "h\u00e9"}) == {"session": b"bytes:h\xc3\xa9", "reference": b"bytes:h\xc3\xa9"}
    assert python_paths(op, {}) == {"session": b"bytes:", "reference": b"bytes:"}


def test_a_python_kernel_gets_text_as_str():
    op = seen_op("PyText", Attr("blob", "string", default="d\u00e9f"))
    text = "h\u00e9llo \u4e16\u754c\x00!"
    want = b"str:" + text.encode()
    assert python_paths(op, {"blob": text}) == {"session": want, "reference": want}
    assert python_paths(op, {"blob": text.encode()}) == {"session": want, "reference": want}  # bytes that are text
    default = b"str:" + "d\u00e9f".encode()
    assert python_paths(op, {}) == {"session": default, "reference": default}


def test_bytes_that_are_not_text_are_refused_naming_the_op_and_the_attribute():
    """Was: decoded with replacement characters, the bytes lost, and the kernel ran."""
    op = seen_op("PyNotText", Attr("blob", "string", default=""))
    got = python_paths(op, {"blob": BLOB}, reference=False)["session"]
    assert isinstance(got, Exception), got
    assert "PyNotText (node 'n0'): attribute blob: the node's value " in str(got), got
    assert "is not UTF-8 text (byte 0xff at offset 1); declare the attribute with bytes=True" in str(got)
    # the process goes on: the next session works
    assert python_paths(op, {"blob": "ok"}) == {"session": b"str:ok", "reference": b"str:ok"}


def test_the_reference_and_shape_inference_see_what_a_kernel_sees():
    seen = {}

    def shape(shapes, attrs):
        seen["shape"] = attrs["blob"]
        return (len(attrs["blob"]) + 4,)

    op = Op("RefBytes", [Input("X", "float")], [Output("Y", "uint8", shape=shape)],
            attrs=[Attr("blob", "string", default=b"ab", bytes=True)],
            compute=lambda X, blob: np.frombuffer(b"got:" + blob, np.uint8).copy())
    d = Domain("pyblob.ref").add(op)
    m = make_model(op, d, {"X": X}, attrs={"blob": "h\u00e9"}, outputs={"Y": (np.uint8, None)})
    y = ReferenceEvaluator(m, new_ops=ortcustom.reference_ops(d)).run(None, {"X": X})[0]
    assert y.tobytes() == b"got:" + "h\u00e9".encode()
    from onnx import shape_inference
    inferred = shape_inference.infer_shapes(m)
    assert seen["shape"] == "h\u00e9".encode()
    assert inferred.graph.output[0].type.tensor_type.shape.dim[0].dim_value == 7


def test_bytes_is_for_string_attributes_only():
    with pytest.raises(ValueError, match="bytes=True is for string and strings attributes"):
        Attr("n", "int", default=1, bytes=True)
    with pytest.raises(ValueError, match="default of attribute 'blob' is invalid"):
        Op("BadDefault", [Input("X", "float")], [Output("Y", "float")],
           attrs=[Attr("blob", "string", default=b"\xff")], compute=lambda X, blob: X)
