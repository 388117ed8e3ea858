"""text_ops vs onnxruntime-extensions' ops on the same inputs, in one process: StringLower,
StringUpper, StringSplit, StringRegexReplace (many short strings, few long ones) and the BERT
tokenizer (extensions' BertTokenizer takes one text a run: both run one text a run), 1 and 2
intra-op threads. Prints the best time of each (of --repeat runs, ours and theirs by turns), ours/theirs
of the best times and of the medians.

    python benchmarks/bench_text_ops.py [--repeat N]
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
import text_ops  # noqa: E402
from textdata import BOOL, EXT_DOMAIN, INT64, STRING, corpus, extensions, model, ours, session, train_vocab  # noqa: E402


def timed(a, b, repeat):
    """Best (least disturbed) and median times of a and of b, run by turns: on a shared machine
    both see the same load."""
    a(), b()
    ta, tb = [], []
    for _ in range(repeat):
        for f, ts in ((a, ta), (b, tb)):
            t = time.perf_counter()
            f()
            ts.append(time.perf_counter() - t)
    return min(ta), min(tb), float(np.median(ta)) / float(np.median(tb))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    lines = corpus(3000)
    short = np.array([s[:40] for s in lines] * 4, dtype=object)  # 12000 strings of <= 40 characters
    long_ = np.array([" ".join(lines[i:i + 60]) for i in range(0, 3000, 60)], dtype=object)  # 50 of ~6000
    ascii_short = np.array([s.encode("ascii", "ignore").decode() for s in short], dtype=object)
    ascii_long = np.array([s.encode("ascii", "ignore").decode() for s in long_], dtype=object)
    vocab = train_vocab(lines)
    cases = []
    for name, op in (("StringLower", "StringLower"), ("StringUpper", "StringUpper")):
        for size, x in (("short", short), ("long", long_)):
            cases.append((f"{name} {size}", lambda d, op=op: model(op, d, {"X": STRING}, {"Y": STRING}), {"X": x}))
    split_out = {"indices": INT64, "values": STRING, "shape": INT64}
    for size, x in (("short", ascii_short), ("long", ascii_long)):
        feeds = {"input": x, "sep": np.array(" ", dtype=object), "skip_empty": np.array(True)}
        cases.append((f"StringSplit {size}", lambda d: model("StringSplit", d, {"input": STRING, "sep": STRING,
                                                                                "skip_empty": BOOL}, split_out), feeds))
    for size, x in (("short", short), ("long", long_)):
        cases.append((f"StringRegexReplace {size}", lambda d: model(
            "StringRegexReplace", d, {"text": STRING}, {"output": STRING}, attrs={"global_replace": 1},
            initializers={"pattern": np.array([r"[aeiou]+"], dtype=object),
                          "rewrite": np.array(["<\\0>"], dtype=object)}), {"text": x}))
    print(f"load average: {os.getloadavg()}; cpus: {os.cpu_count()}")
    print(f"{'case':32} {'threads':>7} {'ours ms':>9} {'theirs ms':>9} {'ours/theirs':>11} {'(medians)':>9}")
    for threads in (1, 2):
        o_so, e_so = ours(text_ops, threads), extensions(threads)
        for name, make, feeds in cases:
            so_ = session(make(text_ops.DOMAIN), o_so)
            se = session(make(EXT_DOMAIN), e_so)
            a, b, med = timed(lambda: so_.run(None, feeds), lambda: se.run(None, feeds), args.repeat)
            print(f"{name:32} {threads:>7} {a * 1e3:9.3f} {b * 1e3:9.3f} {a / b:11.2f} {med:9.2f}", flush=True)
        # the tokenizer: one text a run for both (extensions' BertTokenizer takes one)
        ours_m = model("BertWordPiece", text_ops.DOMAIN, {"text": STRING}, {"ids": INT64, "row_splits": INT64},
                       attrs={"vocab": vocab})
        theirs_m = model("BertTokenizer", EXT_DOMAIN, {"text": STRING},
                         {"input_ids": INT64, "token_type_ids": INT64, "attention_mask": INT64},
                         attrs={"vocab_file": "\n".join(vocab), "do_lower_case": 1, "strip_accents": 1})
        so_, se = session(ours_m, o_so), session(theirs_m, e_so)
        for size, x in (("short", short[:300]), ("long", long_[:10])):
            one = [{"text": x[i:i + 1]} for i in range(len(x))]
            a, b, med = timed(lambda: [so_.run(None, f) for f in one], lambda: [se.run(None, f) for f in one],
                              max(3, args.repeat // 4))
            print(f"{'BERT tokenizer ' + size + ' (1/run)':32} {threads:>7} {a * 1e3:9.3f} {b * 1e3:9.3f} {a / b:11.2f} "
                  f"{med:9.2f}", flush=True)
        a = min(timed(lambda: so_.run(None, {"text": short}), lambda: None, args.repeat)[:1])
        print(f"{'BertWordPiece short, batched':32} {threads:>7} {a * 1e3:9.3f} {'-':>9} {'-':>11}", flush=True)
    print(f"load average: {os.getloadavg()}")


if __name__ == "__main__":
    main()
