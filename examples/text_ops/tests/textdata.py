"""Shared by the tests and the benchmark: one-node models (ours or onnxruntime-extensions'), and
the WordPiece corpus and vocabulary.

The corpus is generated (no public-domain text ships in an installed package here): a fixed-seed
mix of words in English, French, German, Spanish, Greek, Russian, Chinese and Japanese, accents
precomposed and combining, digits, punctuation, emoji, control characters and odd whitespace."""
from __future__ import annotations

import random

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

import ortcustom

CPU = ["CPUExecutionProvider"]
EXT_DOMAIN = "ai.onnx.contrib"
STRING, INT64, BOOL = TensorProto.STRING, TensorProto.INT64, TensorProto.BOOL


def model(op_type, domain, inputs, outputs, attrs=None, initializers=None):
    """Serialized one-node model: inputs {name: elem type}, initializers {name: array}, outputs
    {name: elem type}; a node input per input, then per initializer, in the order given."""
    inits = [numpy_helper.from_array(np.asarray(v), n) for n, v in (initializers or {}).items()]
    node = helper.make_node(op_type, list(inputs) + list(initializers or {}), list(outputs), name="n0",
                            domain=domain, **(attrs or {}))
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, t, None) for n, t in inputs.items()],
                              [helper.make_tensor_value_info(n, t, None) for n, t in outputs.items()], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(domain, 1)],
                          ir_version=9)
    return m.SerializeToString()


def ours(text_ops, threads=1):
    so = ortcustom.session_options(text_ops.domain)
    so.intra_op_num_threads = threads
    return so


def extensions(threads=1):
    import onnxruntime_extensions

    so = ort.SessionOptions()
    so.register_custom_ops_library(onnxruntime_extensions.get_library_path())
    so.intra_op_num_threads = threads
    return so


def session(m, so):
    return ort.InferenceSession(m, so, providers=CPU)


WORDS = {
    "en": "the quick brown fox jumps over lazy dog while reading books about history science and "
          "unbelievable transformations of nineteenth century railways".split(),
    "fr": "été déjà où garçon français très naïve cœur Noël hôtel élève fenêtre ça".split(),
    "de": "Straße Übung Mädchen Größe schön über Fußgänger Äpfel Öl können".split(),
    "es": "niño mañana corazón canción pingüino España árbol está qué".split(),
    "el": "Αθήνα ελληνικά καλημέρα ΟΔΟΣ φιλοσοφία Σωκράτης ευχαριστώ".split(),
    "ru": "Москва привет спасибо ёлка Россия книга читать".split(),
    "zh": "中文 北京 你好 世界 学习 汉字 电脑".split(),
    "ja": "日本語 ひらがな カタカナ 東京 こんにちは".split(),
    "mix": ["e\u0301te\u0301", "CAFÉ", "naïveté", "résumé", "I\u0307", "ﬁne", "Ⅻ", "x²", "½",
            "\U0001f600", "\U0001f44d\U0001f3fd", "don't", "U.S.A.", "e-mail", "3.14", "1,000", "#tag",
            "@user", "(parenthesis)", "«quoted»", "—dash—", "…", "¿qué?", "¡hola!", "a\u200bb",
            "tab\there", "nbsp\u00a0here", "ideographic\u3000space", "ctrl\x07char", "soft\u00adhyphen"],
}


def corpus(lines=3000, seed=1234):
    rng = random.Random(seed)
    groups = list(WORDS.values())
    out = []
    for _ in range(lines):
        words = []
        for _ in range(rng.randint(0, 24)):
            g = groups[rng.randrange(len(groups))]
            w = g[rng.randrange(len(g))]
            words.append(w + rng.choice(["", "", "", ",", ".", "!", "?", ";"]))
        if rng.random() < 0.05:
            words.append("x" * rng.randint(90, 110))  # past max_input_chars_per_word sometimes
        out.append(rng.choice([" ", " ", "  "]).join(words))
    return out


def train_vocab(lines, size=400):
    """A WordPiece vocabulary trained on lines (tokenizers' trainer): small, so that words split
    into pieces and some characters are [UNK]."""
    from tokenizers import BertWordPieceTokenizer

    tok = BertWordPieceTokenizer(lowercase=True, strip_accents=None)
    tok.train_from_iterator(lines[: len(lines) // 2], vocab_size=size, min_frequency=2, limit_alphabet=150,
                            special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"], show_progress=False)
    return [w for w, _ in sorted(tok.get_vocab().items(), key=lambda kv: kv[1])]
