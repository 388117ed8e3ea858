"""String tensors (ONNX `tensor(string)`), in every path: a native kernel reads oc_string elements
(UTF-8 bytes, NUL-terminated) and sets a string output's elements with oc_set_string, in a session,
a plain library loaded by Python without ortcustom and by a C host, and a direct call; a Python
kernel takes and returns NumPy arrays of str. Bytes that are not UTF-8, a string where a number is
declared and the reverse, empty tensors, and kernels that break the string rules: clear errors."""
from __future__ import annotations

import json
import os
import shutil
import sys
import textwrap

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, checker, helper, shape_inference
from onnx.reference import ReferenceEvaluator

import ortcustom
from ortcustom import Domain, Input, Op, Output, kernels
from ortcustom.testing import make_model
from c_host import no_c_library_reason, run_host
from helpers import CPU, run_python
from plain_library import build_library

HERE = os.path.dirname(__file__)
DECLARATIONS = textwrap.dedent("""
    from ortcustom import Attr, Domain, Input, Op, Output

    K = "textops._kernels:"
    StrUpper = Op("StrUpper", [Input("X", "string")], [Output("Y", "string", shape="X")], native=K + "str_upper")
    StrLen = Op("StrLen", [Input("X", "string")], [Output("Y", "int64", shape="X")], native=K + "str_len")
    StrSplit = Op("StrSplit", [Input("X", "string")], [Output("Y", "string")], attrs=[Attr("sep", "string", " ")],
                  native=K + "str_split")
    StrConcat = Op("StrConcat", [Input("X", "string"), Input("Y", "string")], [Output("Z", "string", shape="X")],
                   native=K + "str_concat")
    StrBad = Op("StrBad", [Input("X", "string")], [Output("Y", "string", shape="X"), Output("F", "float", shape="X")],
                attrs=[Attr("how", "int")], native=K + "str_bad")
    StrSlice = Op("StrSlice", [Input("X", "string")], [Output("Y", "string", shape="X")],
                  attrs=[Attr("start", "int", 0), Attr("size", "int", 1 << 40)], native=K + "str_slice")
    domain = Domain("textops").add(StrUpper, StrLen, StrSplit, StrConcat, StrBad, StrSlice)
""")
PATHS = ["session", "library", pytest.param("c_host", marks=pytest.mark.skipif(
    no_c_library_reason() is not None, reason=str(no_c_library_reason()))), "direct"]
WORDS = np.array([["h\u00e9llo w\u00f6rld", ""], ["\u4e16\u754c \U0001f600 ok", "a b  c"]], dtype=object)


@pytest.fixture(scope="module")
def textops(tmp_path_factory):
    if shutil.which(os.environ.get("CXX", "g++")) is None:
        pytest.skip("no C++ compiler (g++, or $CXX)")
    src = tmp_path_factory.mktemp("text") / "src"
    (src / "textops").mkdir(parents=True)
    (src / "textops" / "__init__.py").write_text(DECLARATIONS)
    lib = build_library(src, "textops:domain", [os.path.join(HERE, "native", "string_kernels.cpp")],
                        src / "textops" / "_kernels.so")
    sys.path.insert(0, str(src))
    import textops

    yield textops, lib
    sys.path.remove(str(src))
    for name in [n for n in sys.modules if n.split(".")[0] == "textops"]:
        del sys.modules[name]


LIBRARY_RUN = textwrap.dedent("""
    import json, sys, numpy as np, onnxruntime as ort
    so = ort.SessionOptions()
    so.register_custom_ops_library(LIB)
    feeds = {}
    for k, (flat, shape) in json.loads(FEEDS).items():
        feeds[k] = np.empty(len(flat), object)
        feeds[k][:] = flat
        feeds[k] = feeds[k].reshape(shape)
    try:
        sess = ort.InferenceSession(MODEL, so, providers=["CPUExecutionProvider"])
        print("RESULT", json.dumps([o.tolist() for o in sess.run(None, feeds)]))
    except Exception as e:
        print("ERROR", str(e).replace("\\\\n", " "))
    assert "ortcustom" not in sys.modules
""")


def outcome(path, pkg, lib, op, feeds, tmp_path, attrs=None):
    """("ok", [outputs as lists]) or ("error", the message)."""
    attrs = attrs or {}
    if path == "direct":
        try:
            got = kernels.call(op, *feeds.values(), **attrs)
            return "ok", [g.tolist() for g in (got if isinstance(got, tuple) else (got,))]
        except Exception as e:
            return "error", f"{type(e).__name__}: {e}"
    m = make_model(op, pkg.domain, feeds, attrs=attrs)
    if path == "session":
        try:
            sess = ort.InferenceSession(m.SerializeToString(), ortcustom.session_options(pkg.domain), providers=CPU)
            return "ok", [o.tolist() for o in sess.run(None, feeds)]
        except Exception as e:
            return "error", str(e)
    if path == "c_host":
        r = run_host(m, feeds, libraries=[lib], threads=2, repeat=2)
        assert r.returncode in (0, 4, 5), r.stdout + r.stderr
        return ("ok", [o.tolist() for o in r.outputs.values()]) if r.returncode == 0 else ("error", r.error)
    (tmp_path / "m.onnx").write_bytes(m.SerializeToString())
    code = (LIBRARY_RUN.replace("LIB", repr(str(lib))).replace("MODEL", repr(str(tmp_path / "m.onnx")))
            .replace("FEEDS", repr(json.dumps({k: [np.asarray(v).reshape(-1).tolist(), np.shape(v)]
                                                for k, v in feeds.items()}))))
    r = run_python(code)
    assert r.returncode == 0, r.stdout + r.stderr
    line = next(l for l in r.stdout.splitlines() if l.startswith(("RESULT", "ERROR")))
    return ("ok", json.loads(line[7:])) if line.startswith("RESULT") else ("error", line[6:])


def upper(a):
    return np.vectorize(lambda s: "".join(c.upper() if "a" <= c <= "z" else c for c in s), otypes=[object])(a)


@pytest.mark.parametrize("path", PATHS)
def test_a_native_kernel_maps_strings_to_strings_on_the_pool(path, textops, tmp_path):
    pkg, lib = textops
    many = np.array([f"w{i} \u00e9" * (i % 7) for i in range(3000)], dtype=object)  # many tasks, empty ones too
    for x in (WORDS, many):
        assert outcome(path, pkg, lib, pkg.StrUpper, {"X": x}, tmp_path) == ("ok", [upper(x).tolist()])


@pytest.mark.parametrize("path", PATHS)
def test_strings_in_numbers_out(path, textops, tmp_path):
    pkg, lib = textops
    want = np.vectorize(lambda s: len(s.encode()), otypes=[np.int64])(WORDS)
    assert outcome(path, pkg, lib, pkg.StrLen, {"X": WORDS}, tmp_path) == ("ok", [want.tolist()])


@pytest.mark.parametrize("path", PATHS)
def test_an_output_whose_size_the_data_tells(path, textops, tmp_path):
    pkg, lib = textops
    want = [t for s in WORDS.reshape(-1) for t in s.split(" ") if t]
    assert outcome(path, pkg, lib, pkg.StrSplit, {"X": WORDS}, tmp_path) == ("ok", [want])
    assert outcome(path, pkg, lib, pkg.StrSplit, {"X": WORDS}, tmp_path, {"sep": "o"}) == (
        "ok", [[t for s in WORDS.reshape(-1) for t in s.split("o") if t]])


@pytest.mark.parametrize("path", PATHS)
def test_two_string_inputs(path, textops, tmp_path):
    pkg, lib = textops
    y = np.array([["1", "\u00e9"], ["", "x" * 5000]], dtype=object)
    got = outcome(path, pkg, lib, pkg.StrConcat, {"X": WORDS, "Y": y}, tmp_path)
    assert got == ("ok", [(WORDS + y).tolist()])


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("shape", [(0,), (2, 0, 3)])
def test_empty_string_tensors(path, shape, textops, tmp_path):
    pkg, lib = textops
    x = np.empty(shape, object)
    assert outcome(path, pkg, lib, pkg.StrUpper, {"X": x}, tmp_path) == ("ok", [x.tolist()])
    assert outcome(path, pkg, lib, pkg.StrLen, {"X": x}, tmp_path) == ("ok", [np.empty(shape, np.int64).tolist()])
    assert outcome(path, pkg, lib, pkg.StrSplit, {"X": x}, tmp_path) == ("ok", [[]])


BROKEN = {
    0: "output Y element 0: the kernel set bytes that are not UTF-8 (byte 2 is 0xff)",
    1: "oc_set_string: output Y has 4 elements; the kernel set element 4",
    2: "oc_set_string: output F is a float tensor, not a string one",
    3: "oc_set_string: output Y was not allocated (oc_output first)",
    4: "oc_set_string: output Y element 0: the kernel gave a negative size",
}


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("how", list(BROKEN))
def test_a_kernel_that_breaks_the_string_rules_is_an_error_and_the_next_call_works(path, how, textops, tmp_path):
    pkg, lib = textops
    kind, got = outcome(path, pkg, lib, pkg.StrBad, {"X": WORDS}, tmp_path, {"how": how})
    assert kind == "error" and "StrBad" in got and BROKEN[how] in got, got
    assert outcome(path, pkg, lib, pkg.StrUpper, {"X": WORDS}, tmp_path) == ("ok", [upper(WORDS).tolist()])


@pytest.mark.parametrize("path", PATHS)
def test_an_element_may_hold_a_nul(path, textops, tmp_path):
    """oc_set_string copies `size` bytes, NULs included (ORT keeps them; FillStringTensor would not)."""
    pkg, lib = textops
    kind, got = outcome(path, pkg, lib, pkg.StrBad, {"X": WORDS}, tmp_path, {"how": 5})
    assert kind == "ok" and got[0][0][0] == "a\0b" and got[0][0][1] == "" and got[1] == [[0.0, 0.0]] * 2, got


def test_bytes_that_are_not_utf8_in_an_input_are_refused(textops):
    """From a C host, any bytes reach ORT; in a direct call, a bytes element: the kernel never sees them."""
    pkg, lib = textops
    bad = np.array([b"ok", b"caf\xc3", b"\xed\xa0\x80"], dtype=object)  # cut character; a surrogate
    with pytest.raises(ValueError, match=r"StrLen: input X element 1 is not UTF-8 \(byte 3 is 0xc3\)"):
        kernels.call(pkg.StrLen, bad)
    with pytest.raises(ValueError, match=r"StrLen: input X element 0 is not UTF-8 \(byte 0 is 0xed\)"):
        kernels.call(pkg.StrLen, bad[2:])
    assert kernels.call(pkg.StrLen, np.array([b"caf\xc3\xa9"], dtype=object)).tolist() == [5]
    if no_c_library_reason() is None:
        m = make_model(pkg.StrLen, pkg.domain, {"X": bad})
        r = run_host(m, {"X": bad}, libraries=[lib])
        assert r.returncode == 5 and "StrLen (node 'n0'): input X element 1 is not UTF-8 (byte 3 is 0xc3)" in r.error


@pytest.mark.parametrize("path", PATHS)
def test_a_slice_of_an_input_is_set_unless_it_cuts_a_character(path, textops, tmp_path):
    """A kernel may set an output to input bytes (not checked again: they were): all of an element,
    or a part that starts and ends at a character's edge; a part that cuts a character is refused."""
    pkg, lib = textops
    x = np.array(["h\u00e9llo", "a\u00e9b", "", "\U0001f600!"], dtype=object)
    assert outcome(path, pkg, lib, pkg.StrSlice, {"X": x}, tmp_path) == ("ok", [x.tolist()])
    assert outcome(path, pkg, lib, pkg.StrSlice, {"X": x[:3]}, tmp_path, {"start": 1, "size": 2}) == (
        "ok", [["\u00e9", "\u00e9", ""]])
    y = np.array(["abcdef", "\u4e16\u754c"], dtype=object)
    for xs, start, size, err in [(x, 2, 3, "element 0: the kernel set bytes that are not UTF-8 (byte 0 is 0xa9)"),
                                 (x, 0, 2, "element 0: the kernel set bytes that are not UTF-8 (byte 1 is 0xc3)"),
                                 (y, 4, 2, "element 1: the kernel set bytes that are not UTF-8 (byte 0 is 0x95)")]:
        kind, got = outcome(path, pkg, lib, pkg.StrSlice, {"X": xs}, tmp_path, {"start": start, "size": size})
        assert kind == "error" and "StrSlice" in got and err in got, (start, size, got)


@pytest.mark.parametrize("pre", range(4))
def test_long_inputs_are_checked_in_pieces_cut_at_characters(pre, textops):
    """Past a megabyte an input is checked in pieces (on the pool): each cut moved to a character's
    start, so a character across a cut is whole; a bad byte far in is found and named as ever."""
    pkg, lib = textops
    text = "a" * pre + "\U0001f600" * 400_000 + "\u00e9" * 3  # 1.6 MB: cuts inside characters
    x = np.array([text, "x", text[:1_100_001]], dtype=object)
    assert kernels.call(pkg.StrLen, x).tolist() == [len(e.encode()) for e in x]
    assert kernels.call(pkg.StrSlice, x, start=pre, size=8).tolist() == [e.encode()[pre:pre + 8].decode() for e in x]
    raw = [e.encode() for e in x]
    for j, k in [(0, 175_000), (0, 300_000), (2, 290_000)]:  # the k-th emoji made "\xffabc"
        at = pre + 4 * k
        bad = list(raw)
        bad[j] = raw[j][:at] + b"\xffabc" + raw[j][at + 4:]
        with pytest.raises(ValueError, match=rf"StrLen: input X element {j} is not UTF-8 \(byte {at} is 0xff\)"):
            kernels.call(pkg.StrLen, np.array(bad, dtype=object))
    so = ortcustom.session_options(pkg.domain)
    so.intra_op_num_threads = 2
    sess = ort.InferenceSession(make_model(pkg.StrLen, pkg.domain, {"X": x}).SerializeToString(), so, providers=CPU)
    assert sess.run(None, {"X": x})[0].tolist() == [len(e.encode()) for e in x]
    if no_c_library_reason() is None and pre == 1:  # a session's input, bytes as they are: from C
        bad = np.array([raw[0], raw[1], raw[2][:-4] + b"\xf0\x9f\x98"], dtype=object)  # the last character cut
        r = run_host(make_model(pkg.StrLen, pkg.domain, {"X": x}), {"X": bad}, libraries=[lib], threads=2)
        assert r.returncode == 5 and f"input X element 2 is not UTF-8 (byte {len(raw[2]) - 4} is 0xf0)" in r.error


def test_a_string_where_a_number_is_declared_and_the_reverse(textops):
    pkg, _ = textops
    with pytest.raises(TypeError, match="StrLen: X has dtype float64; accepts string"):
        kernels.call(pkg.StrLen, np.zeros(2))
    num = Op("Twice", [Input("X", "float")], [Output("Y", "float", shape="X")], compute=lambda X: X * 2)
    d = Domain("test.twice").add(num)
    # a session: ORT checks the graph's types against the op's before any kernel exists
    for op, dom, feeds, given in [(pkg.StrLen, pkg.domain, {"X": WORDS}, TensorProto.FLOAT),
                                  (num, d, {"X": np.zeros(2, np.float32)}, TensorProto.STRING)]:
        m = make_model(op, dom, feeds)
        m.graph.input[0].type.tensor_type.elem_type = given
        with pytest.raises(Exception, match=f"{op.name}|{op.name.lower()}"):
            ort.InferenceSession(m.SerializeToString(), ortcustom.session_options(dom), providers=CPU)


def test_a_direct_call_takes_str_arrays_and_a_non_text_element_is_refused(textops):
    pkg, _ = textops
    x = np.array(["ab", "\u00e9"])  # "<U2": fixed width
    assert kernels.call(pkg.StrUpper, x).tolist() == ["AB", "\u00e9"]
    assert kernels.call(pkg.StrLen, np.array([b"abc", b""])).tolist() == [3, 0]  # "|S3"
    with pytest.raises(TypeError, match="StrLen: X element 1 is int; a string tensor holds str"):
        kernels.call(pkg.StrLen, np.array(["a", 3], object))
    with pytest.raises(ValueError, match="StrLen: X element 0 cannot be UTF-8"):
        kernels.call(pkg.StrLen, np.array(["\ud800"], object))
    out = np.empty(2, object)
    assert kernels.call(pkg.StrUpper, np.array(["a", "b"], object), out=out) is out and out.tolist() == ["A", "B"]


# ---- Python kernels --------------------------------------------------------------------------

def py_ops():
    up = Op("PyUpper", [Input("X", "string")], [Output("Y", "string", shape="X")],
            compute=lambda X: np.char.upper(X.astype(str)))
    split = Op("PySplit", [Input("X", "string")], [Output("Y", "string"), Output("N", "int64")],
               compute=lambda X: (np.array([t for s in X.reshape(-1) for t in s.split()], object),
                                  np.array([len(s.split()) for s in X.reshape(-1)], np.int64)))
    bad = Op("PyBad", [Input("X", "string")], [Output("Y", "string", shape="X")], compute=lambda X: np.zeros(X.shape))
    worse = Op("PyWorse", [Input("X", "string")], [Output("Y", "string", shape="X")],
               compute=lambda X: np.array([1] * X.size, object).reshape(X.shape))
    raw = Op("PyRaw", [Input("X", "string")], [Output("Y", "string", shape="X")],
             compute=lambda X: np.array([s.encode() + b"\xff" for s in X.reshape(-1)], object).reshape(X.shape))
    return up, split, bad, worse, raw, Domain("test.pystr").add(up, split, bad, worse, raw)


def test_a_python_kernel_takes_and_returns_str_arrays():
    up, split, _, _, _, d = py_ops()
    seen = []
    probe = Op("Probe", [Input("X", "string")], [Output("Y", "string", shape="X")],
               compute=lambda X: seen.append((X.dtype, X.flags.writeable, type(X.reshape(-1)[0]))) or X)
    d2 = Domain("test.pyprobe").add(probe)
    so = ortcustom.session_options(d)
    s = ort.InferenceSession(make_model(up, d, {"X": WORDS}).SerializeToString(), so, providers=CPU)
    np.testing.assert_array_equal(s.run(None, {"X": WORDS})[0], np.char.upper(WORDS.astype(str)))
    s = ort.InferenceSession(make_model(split, d, {"X": WORDS}).SerializeToString(), so, providers=CPU)
    y, n = s.run(None, {"X": WORDS})
    assert y.tolist() == [t for w in WORDS.reshape(-1) for t in w.split()] and n.tolist() == [2, 0, 3, 3]
    s = ort.InferenceSession(make_model(probe, d2, {"X": WORDS}).SerializeToString(),
                             ortcustom.session_options(d2), providers=CPU)
    assert s.run(None, {"X": WORDS})[0].tolist() == WORDS.tolist()
    assert seen == [(np.dtype(object), False, str)]


@pytest.mark.parametrize("which, error", [
    (2, "PyBad (node 'n0'): output Y has dtype float64; the op declares string"),
    (3, "PyWorse (node 'n0'): output Y element 0 is int; a string tensor holds str"),
    (4, "PyRaw (node 'n0'): output Y element 0: the kernel set bytes that are not UTF-8 (byte 6 is 0xff)"),
])
def test_a_python_kernel_returning_what_is_not_text_is_an_error(which, error):
    ops = py_ops()
    op, d = ops[which], ops[-1]
    x = np.array(["h\u00e9llo"], object)
    s = ort.InferenceSession(make_model(op, d, {"X": x}).SerializeToString(), ortcustom.session_options(d), providers=CPU)
    with pytest.raises(Exception) as e:
        s.run(None, {"X": x})
    assert error in str(e.value)


def test_schema_checker_shape_inference_and_reference_take_strings():
    up, split, _, _, _, d = py_ops()
    m = make_model(split, d, {"X": WORDS}, outputs={"Y": ("string", ["tokens"]), "N": ("int64", ["words"])})
    checker.check_model(m, full_check=True)
    inferred = shape_inference.infer_shapes(m, strict_mode=True)
    types = {v.name: v.type.tensor_type.elem_type for v in inferred.graph.output}
    assert types == {"Y": TensorProto.STRING, "N": TensorProto.INT64}
    y, n = ReferenceEvaluator(m, new_ops=ortcustom.reference_ops(d)).run(None, {"X": WORDS})
    assert y.tolist() == [t for w in WORDS.reshape(-1) for t in w.split()] and n.tolist() == [2, 0, 3, 3]


def test_a_torch_op_cannot_take_strings():
    with pytest.raises(ValueError, match=r"op 'Tok': torch='my::tok': X may be a string tensor, which torch has no type"):
        Op("Tok", [Input("X", "T")], [Output("Y", "int64")], types={"T": ("float", "string")},
           native="tok", torch="my::tok")


@pytest.mark.parametrize("raw, bad_at", [
    (b"\xc0\x80", 0), (b"\xc1\xbf", 0),              # overlong 2-byte forms
    (b"\xe0\x80\x80", 0), (b"a\xe0\x9f\xbf", 1),     # overlong 3-byte forms
    (b"\xf0\x80\x80\x80", 0), (b"\xf0\x8f\xbf\xbf", 0),  # overlong 4-byte forms
    (b"\xed\xa0\x80", 0), (b"\xed\xbf\xbf", 0),      # UTF-16 surrogates
    (b"\xf4\x90\x80\x80", 0), (b"\xf5\x80\x80\x80", 0), (b"\xff", 0),  # past U+10FFFF; never a lead byte
    (b"\x80", 0), (b"abcdefgh\x80", 8), (b"abcdefghijklmnop\xe4\xb8", 16),  # a lone continuation; cut
    (b"\xe4\x41\x96", 0), (b"\xf0\x9f\x98", 0),      # a bad continuation; cut
])
def test_the_utf8_check_is_rfc_3629(raw, bad_at, textops):
    pkg, _ = textops
    with pytest.raises(ValueError, match=rf"input X element 0 is not UTF-8 \(byte {bad_at} is 0x{raw[bad_at]:02x}\)"):
        kernels.call(pkg.StrLen, np.array([raw], object))


@pytest.mark.parametrize("text", ["", "a" * 17, "\u007f\u0080\u07ff\u0800\ud7ff\ue000\uffff\U00010000\U0010ffff",
                                  "\u00e9" * 9 + "x", "\x00inside\x00"])
def test_valid_utf8_passes_whole(text, textops):
    pkg, _ = textops
    assert kernels.call(pkg.StrLen, np.array([text], object)).tolist() == [len(text.encode())]


def test_string_bindings_are_never_given_to_the_cuda_provider():
    """String tensors live on the host: an op with a CUDA kernel runs its string bindings on the CPU."""
    op = Op("Either", [Input("X", "T")], [Output("Y", "T", shape="X")], types={"T": ("float", "string")},
            compute=lambda X: X, cuda=True)
    plan = [(b["provider"], b["input_types"]) for b in ortcustom._customop.describe(Domain("test.either").add(op))
            if not b["type_guard"]]
    assert plan == [("CPUExecutionProvider", ["float"]), ("CPUExecutionProvider", ["string"]),
                    ("CUDAExecutionProvider", ["float"])]
