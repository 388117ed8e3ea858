"""Text ops over ONNX string tensors, with C++ kernels (kernels/): proof that ortcustom's string
tensors carry real work. Nodes `textops::<op>`; see README.md for each op's contract.

    import onnxruntime as ort, ortcustom, text_ops
    sess = ort.InferenceSession(model, ortcustom.session_options(text_ops.domain))
"""
import ortcustom
from ortcustom import Attr, Input, Op, Output

K = "text_ops._kernels:"

StringLower = Op(
    "StringLower", [Input("X", "string")], [Output("Y", "string", shape="X")], native=K + "string_lower",
    doc="Y = X lower-cased: ASCII and Latin-1 letters (U+00C0..U+00DE but U+00D7); other text as is.")
StringUpper = Op(
    "StringUpper", [Input("X", "string")], [Output("Y", "string", shape="X")], native=K + "string_upper",
    doc="Y = X upper-cased: ASCII and Latin-1 letters (U+00E0..U+00FE but U+00F7); other text as is.")

StringSplit = Op(
    "StringSplit",
    inputs=[Input("input", "string"), Input("sep", "string"), Input("skip_empty", "bool")],
    outputs=[Output("indices", "int64"), Output("values", "string"), Output("shape", "int64")],
    native=K + "string_split",
    doc="onnxruntime-extensions' StringSplit: input 1-D; each (UTF-8) character of the scalar sep "
        "splits (an empty sep: one token per character); an empty element gives no token; skip_empty "
        "drops empty tokens. indices (n, 2): (row, position); values (n,); shape: (rows, the most "
        "tokens of a row).")

StringRegexReplace = Op(
    "StringRegexReplace",
    inputs=[Input("text", "string"), Input("pattern", "string", constant=True),
            Input("rewrite", "string", constant=True)],
    outputs=[Output("output", "string", shape="text")],
    attrs=[Attr("global_replace", "int", default=1, choices=(0, 1))],
    native=K + "string_regex_replace",
    doc="onnxruntime-extensions' StringRegexReplace: each match of pattern (one string, ECMAScript "
        "syntax, compiled once per node) replaced by rewrite (\\0..\\9: the groups); every match, or "
        "the first with global_replace=0.")

BertWordPiece = Op(
    "BertWordPiece",
    inputs=[Input("text", "string")],
    outputs=[Output("ids", "int64"), Output("row_splits", "int64")],
    attrs=[Attr("vocab", "strings"), Attr("do_lower_case", "int", default=1, choices=(0, 1)),
           Attr("unk_token", "string", default="[UNK]"), Attr("suffix_indicator", "string", default="##"),
           Attr("max_input_chars_per_word", "int", default=100, min=1)],
    native=K + "bert_wordpiece",
    doc="BERT's tokenizer without special tokens (transformers.BertTokenizer's "
        "encode(text, add_special_tokens=False)): basic tokenization, then WordPiece over vocab "
        "(token id = position). text 1-D; ids: every element's ids in order; row_splits (n + 1,): "
        "element j's ids are ids[row_splits[j]:row_splits[j + 1]].")

ALL = (StringLower, StringUpper, StringSplit, StringRegexReplace, BertWordPiece)
DOMAIN = "textops"
domain = ortcustom.Domain(DOMAIN).add(*ALL)

__all__ = ["ALL", "DOMAIN", "domain"] + [op.name for op in ALL]
