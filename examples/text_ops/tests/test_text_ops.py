"""text_ops against what each op must do: the Latin-1 case rules, onnxruntime-extensions' own
StringLower/StringUpper/StringSplit/StringRegexReplace on the same inputs, and transformers'
BertTokenizer on a few thousand lines; in a session and by ortcustom.kernels.call; bad input and
empty tensors."""
import numpy as np
import onnxruntime as ort
import pytest

import text_ops
from ortcustom import kernels
from onnx import TensorProto
from textdata import BOOL, EXT_DOMAIN, INT64, STRING, corpus, extensions, model, ours, session, train_vocab

D = text_ops.DOMAIN
MIXED = np.array(["Hello, World!", "", "ÀÉÎÕÜ àéîõü ×÷ ß ÿ Ÿ µ", "Straße ΣΑΣ σας Москва 北京 \U0001f600",
                  "MiXeD 123 ÇÑ çñ", "e\u0301 \u00c5"], dtype=object)
LATIN_UPPER = [chr(c) for c in range(0xC0, 0xDF) if c != 0xD7]


def want_lower(s):
    return "".join(c.lower() if ("A" <= c <= "Z" or c in LATIN_UPPER) else c for c in s)


def want_upper(s):
    return "".join(c.upper() if ("a" <= c <= "z" or chr(ord(c) - 0x20) in LATIN_UPPER) else c for c in s)


@pytest.fixture(scope="module")
def ext():
    return extensions()


@pytest.mark.parametrize("op,want", [("StringLower", want_lower), ("StringUpper", want_upper)])
def test_case_ascii_and_latin1_others_pass_through(op, want, ext):
    x = np.concatenate([MIXED, np.array([f"Word{i} ÀÉ àé" * (i % 5) for i in range(500)], dtype=object),
                        np.array([f"Word{i} Q" * (i % 5) for i in range(500)], dtype=object)])
    expected = [want(s) for s in x]
    m = model(op, D, {"X": STRING}, {"Y": STRING})
    for threads in (1, 2):
        assert session(m, ours(text_ops, threads)).run(None, {"X": x})[0].tolist() == expected
    assert kernels.call(getattr(text_ops, op), x).tolist() == expected
    assert kernels.call(getattr(text_ops, op), MIXED.reshape(2, 3)).tolist() == [expected[:3], expected[3:6]]
    # onnxruntime-extensions gives the same where its rules are ours: ASCII (and Latin-1 for
    # StringLower; its StringUpper leaves Latin-1 as is, its StringLower changes some Greek and Cyrillic)
    theirs_too = [s for s in x if all(ord(c) < (256 if op == "StringLower" else 128) for c in s)]
    assert len(theirs_too) > 400
    theirs = session(model(op, EXT_DOMAIN, {"X": STRING}, {"Y": STRING}), ext).run(
        None, {"X": np.array(theirs_too, dtype=object)})[0]
    assert theirs.tolist() == [want(s) for s in theirs_too]


def test_case_examples():
    assert kernels.call(text_ops.StringLower, MIXED).tolist()[2:4] == [
        "àéîõü àéîõü ×÷ ß ÿ Ÿ µ", "straße ΣΑΣ σας Москва 北京 \U0001f600"]
    assert kernels.call(text_ops.StringUpper, MIXED).tolist()[2:4] == [
        "ÀÉÎÕÜ ÀÉÎÕÜ ×÷ ß ÿ Ÿ µ", "STRAßE ΣΑΣ σας Москва 北京 \U0001f600"]


SPLIT_OUT = {"indices": INT64, "values": STRING, "shape": INT64}
SPLIT_IN = np.array(["a,b,,c", "", ",x,", "ab  z", "a, b,c", "héllo wörld  ä,,ö", ",", "  "], dtype=object)


@pytest.mark.parametrize("sep", [",", " ", ", ", ""])
@pytest.mark.parametrize("skip_empty", [False, True])
def test_split_as_extensions(sep, skip_empty, ext):
    x = SPLIT_IN if sep != "" else np.array([s for s in SPLIT_IN if s.isascii()], dtype=object)
    feeds = {"input": x, "sep": np.array(sep, dtype=object), "skip_empty": np.array(skip_empty)}
    ins = {"input": STRING, "sep": STRING, "skip_empty": BOOL}
    theirs = session(model("StringSplit", EXT_DOMAIN, ins, SPLIT_OUT), ext).run(None, feeds)
    for threads in (1, 2):
        got = session(model("StringSplit", D, ins, SPLIT_OUT), ours(text_ops, threads)).run(None, feeds)
        for g, t in zip(got, theirs):
            assert g.dtype == t.dtype and g.shape == t.shape and g.tolist() == t.tolist()
    got = kernels.call(text_ops.StringSplit, *feeds.values())
    assert [g.tolist() for g in got] == [t.tolist() for t in theirs]


@pytest.mark.parametrize("skip_empty", [False, True])
def test_split_at_non_ascii_characters(skip_empty):
    x = np.array(["aöböö北c", "ö", "北京", ""], dtype=object)
    indices, values, shape = kernels.call(text_ops.StringSplit, x, np.array("ö北", dtype=object), np.array(skip_empty))
    rows = [s.replace("北", "ö").split("ö") if s else [] for s in x]
    rows = [[t for t in r if t or not skip_empty] for r in rows]
    assert values.tolist() == [t for r in rows for t in r]
    assert indices.tolist() == [[i, k] for i, r in enumerate(rows) for k in range(len(r))]
    assert shape.tolist() == [4, max(len(r) for r in rows)]


def test_split_empty_sep_splits_utf8_characters():
    x = np.array(["hé北\U0001f600", "", "a"], dtype=object)
    indices, values, shape = kernels.call(text_ops.StringSplit, x, np.array("", dtype=object), np.array(False))
    assert values.tolist() == ["h", "é", "北", "\U0001f600", "a"]
    assert indices.tolist() == [[0, 0], [0, 1], [0, 2], [0, 3], [2, 0]] and shape.tolist() == [3, 4]


def test_split_many_rows_on_the_pool():
    rows = [" ".join(f"w{i}_{k}" for k in range(i % 9)) for i in range(3000)]
    x = np.array(rows, dtype=object)
    m = model("StringSplit", D, {"input": STRING, "sep": STRING, "skip_empty": BOOL}, SPLIT_OUT)
    indices, values, shape = session(m, ours(text_ops, 2)).run(
        None, {"input": x, "sep": np.array(" ", dtype=object), "skip_empty": np.array(True)})
    assert values.tolist() == [w for r in rows for w in r.split()]
    assert indices.tolist() == [[i, k] for i, r in enumerate(rows) for k in range(len(r.split()))]
    assert shape.tolist() == [3000, 8]


REGEX_CASES = [(r"(b)", r"<\1>"), (r"[aeiou]+", "_"), (r"(\w+)@(\w+)", r"\2 at \1"), (r"\s+", " "),
               (r"x*", "-"), (r"^", ">"), (r"\d", r"[\0]"), (r"dollar", r"$1\\"),
               # where a match can start is read off the pattern (a leading byte or class, required)
               # or not (alternation, an optional first atom)
               (r"[a-c]x?", "#"), (r"l+o", r"\0!"), ("é", "E"), (r"[-.]", "~"), (r"a|o", "0"), (r"o?b", "B"),
               (r"b{0,1}c", "C")]
REGEX_TEXT = np.array(["abc abc", "xbz", "", "mail me: joe@example now", "  spaced \t out  ",
                       "digits 0123 and 45", "dollar bills", "héllo wörld"] * 3, dtype=object)


def regex_model(domain, pattern, rewrite, global_replace):
    return model("StringRegexReplace", domain, {"text": STRING}, {"output": STRING},
                 attrs={"global_replace": global_replace},
                 initializers={"pattern": np.array([pattern], dtype=object), "rewrite": np.array([rewrite], dtype=object)})


@pytest.mark.parametrize("pattern,rewrite", REGEX_CASES)
@pytest.mark.parametrize("global_replace", [1, 0])
def test_regex_replace_as_extensions(pattern, rewrite, global_replace, ext):
    theirs = session(regex_model(EXT_DOMAIN, pattern, rewrite, global_replace), ext).run(None, {"text": REGEX_TEXT})[0]
    for threads in (1, 2):
        got = session(regex_model(D, pattern, rewrite, global_replace), ours(text_ops, threads)).run(
            None, {"text": REGEX_TEXT})[0]
        assert got.tolist() == theirs.tolist()
    got = kernels.call(text_ops.StringRegexReplace, REGEX_TEXT, np.array([pattern], dtype=object),
                       np.array([rewrite], dtype=object), global_replace=global_replace)
    assert got.tolist() == theirs.tolist()


def test_regex_bad_pattern_and_rewrite_are_errors_at_creation():
    with pytest.raises(Exception, match=r"StringRegexReplace.*pattern '\(unclosed' is not a valid regular"):
        session(regex_model(D, "(unclosed", "x", 1), ours(text_ops))
    with pytest.raises(Exception, match=r"StringRegexReplace.*rewrite 'a\\q': a backslash must be followed"):
        session(regex_model(D, "a", r"a\q", 1), ours(text_ops))
    with pytest.raises(Exception, match=r"StringRegexReplace.*pattern.*expected one string"):
        session(model("StringRegexReplace", D, {"text": STRING}, {"output": STRING},
                      initializers={"pattern": np.array(["a", "b"], dtype=object),
                                    "rewrite": np.array(["x"], dtype=object)}), ours(text_ops))
    # the process goes on: a good one works
    got = session(regex_model(D, "a", "b", 1), ours(text_ops)).run(None, {"text": np.array(["aa"], dtype=object)})
    assert got[0].tolist() == ["bb"]


# --- BertWordPiece vs transformers.BertTokenizer

@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    transformers = pytest.importorskip("transformers")
    lines = corpus()
    vocab = train_vocab(lines)
    path = tmp_path_factory.mktemp("vocab") / "vocab.txt"
    path.write_text("".join(w + "\n" for w in vocab), encoding="utf-8")
    hf = transformers.BertTokenizer(str(path), do_lower_case=True)
    return lines, vocab, hf


def test_wordpiece_same_ids_as_transformers(bert):
    lines, vocab, hf = bert
    assert len(lines) == 3000 and sum(not s.isascii() for s in lines) > 1000
    want = [hf.encode(s, add_special_tokens=False) for s in lines]
    unk = vocab.index("[UNK]")
    assert sum(i == unk for w in want for i in w) > 50  # [UNK]s, and words in pieces:
    assert sum(vocab[i].startswith("##") for w in want for i in w) > 10000
    x = np.array(lines, dtype=object)
    m = model("BertWordPiece", D, {"text": STRING}, {"ids": INT64, "row_splits": INT64}, attrs={"vocab": vocab})
    for threads in (1, 2):
        ids, splits = session(m, ours(text_ops, threads)).run(None, {"text": x})
        got = [ids[splits[j]:splits[j + 1]].tolist() for j in range(len(lines))]
        bad = [(lines[j], got[j], want[j]) for j in range(len(lines)) if got[j] != want[j]]
        assert not bad, bad[:3]
    ids, splits = kernels.call(text_ops.BertWordPiece, x[:50], vocab=vocab)
    assert splits.tolist() == np.cumsum([0] + [len(w) for w in want[:50]]).tolist()
    assert ids.tolist() == [i for w in want[:50] for i in w]


def test_wordpiece_pieces_and_unknowns():
    vocab = ["[UNK]", "un", "##aff", "##able", "runn", "##ing", ",", "北", "e"]
    ids, splits = kernels.call(text_ops.BertWordPiece, np.array(["Unaffable, RUNNING", "", "北京 É xyz"], dtype=object),
                               vocab=vocab)
    assert ids.tolist() == [1, 2, 3, 6, 4, 5, 7, 0, 8, 0] and splits.tolist() == [0, 6, 6, 10]
    ids, _ = kernels.call(text_ops.BertWordPiece, np.array(["Unaffable É"], dtype=object), vocab=vocab,
                          do_lower_case=0)
    assert ids.tolist() == [0, 0]  # case and accents kept: neither is in vocab
    with pytest.raises(Exception, match=r"BertWordPiece.*unk_token '\[UNK\]' is not in vocab"):
        kernels.call(text_ops.BertWordPiece, np.array(["a"], dtype=object), vocab=["a"])


# --- bad input, empty tensors

def test_a_number_where_a_string_is_declared_and_the_reverse():
    with pytest.raises(TypeError, match="StringLower: X has dtype float64; accepts string"):
        kernels.call(text_ops.StringLower, np.zeros(3))
    with pytest.raises(TypeError, match="StringSplit: skip_empty"):
        kernels.call(text_ops.StringSplit, np.array(["a b"], dtype=object), np.array(" ", dtype=object),
                     np.array("yes", dtype=object))
    m = model("StringUpper", D, {"X": TensorProto.FLOAT}, {"Y": STRING})
    with pytest.raises(Exception, match="StringUpper"):
        session(m, ours(text_ops))
    assert kernels.call(text_ops.StringUpper, np.array(["ok"], dtype=object)).tolist() == ["OK"]


def test_bad_shapes_name_the_input():
    with pytest.raises(Exception, match=r"StringSplit.*input.*expected a 1-D tensor"):
        kernels.call(text_ops.StringSplit, np.array([["a"]], dtype=object), np.array(" ", dtype=object), np.array(True))
    with pytest.raises(Exception, match=r"StringSplit.*sep.*expected one string"):
        kernels.call(text_ops.StringSplit, np.array(["a"], dtype=object), np.array([" ", ","], dtype=object),
                     np.array(True))


def test_empty_tensors():
    e = np.array([], dtype=object)
    assert kernels.call(text_ops.StringLower, e.reshape(0, 3)).shape == (0, 3)
    indices, values, shape = kernels.call(text_ops.StringSplit, e, np.array(" ", dtype=object), np.array(False))
    assert indices.shape == (0, 2) and values.shape == (0,) and shape.tolist() == [0, 0]
    assert kernels.call(text_ops.StringRegexReplace, e, np.array(["a"], dtype=object), np.array(["b"], dtype=object)
                        ).shape == (0,)
    ids, splits = kernels.call(text_ops.BertWordPiece, e, vocab=["[UNK]"])
    assert ids.shape == (0,) and splits.tolist() == [0]
    m = model("StringUpper", D, {"X": STRING}, {"Y": STRING})
    assert session(m, ours(text_ops, 2)).run(None, {"X": e})[0].shape == (0,)
