"""Lifetimes: domains, ops and session options dropped while sessions live; registrations reused,
memory bounded."""
import gc

import numpy as np
import onnxruntime as ort

import ortcustom
from helpers import CPU, rss_bytes, session
from known_good import Double, check_inverse_works
from ortcustom import Domain, Input, Op, Output
from ortcustom.ops import GroupNorm, Inverse
from ortcustom.testing import make_model


def test_domain_and_op_garbage_collected_while_sessions_live():
    def make():
        op = Op("Shift", [Input("X", "float")], [Output("Y", "float", shape="X")],
                compute=lambda X: X + np.float32(1))  # only the domain refers to this op
        d = Domain("org.rel.gc").add(op, Inverse)
        s1 = session(op, d, {"X": (np.float32, [2])})
        s2 = session(Inverse, d, {"X": (np.float32, [3, 3])})
        return s1, s2

    s1, s2 = make()
    gc.collect()
    for _ in range(3):
        np.testing.assert_array_equal(s1.run(None, {"X": np.zeros(2, np.float32)})[0], [1, 1])
        check_inverse_works(s2)
        del s1
        gc.collect()
        s1, s2 = make()
        gc.collect()


def test_session_options_dropped_before_the_session():
    d = Domain("org.rel.so").add(Inverse, Double)
    model = make_model(Inverse, d, {"X": (np.float32, [3, 3])})
    so = ortcustom.session_options(d)
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=CPU)
    sess2 = ort.InferenceSession(model.SerializeToString(), so, providers=CPU)
    del so, d
    gc.collect()
    check_inverse_works(sess)
    del sess
    gc.collect()
    check_inverse_works(sess2)


def test_same_domain_into_1000_session_options_memory_bounded():
    d = Domain("org.rel.many").add(Inverse, GroupNorm, Double)
    model = make_model(Inverse, d, {"X": (np.float32, [3, 3])}).SerializeToString()

    def batch(n):
        for i in range(n):
            so = ortcustom.session_options(d)
            if i % 100 == 0:
                check_inverse_works(ort.InferenceSession(model, so, providers=CPU))
            del so

    batch(100)  # warm-up: first-time allocations, ORT's lazily made state
    gc.collect()
    before = rss_bytes()
    batch(1000)
    gc.collect()
    grown = rss_bytes() - before
    # one OrtCustomOpDomain per distinct domain content, shared: the 1000 options cost ORT's own
    # SessionOptions objects (a few KB each at most). A leak of the domain/op structs per call would
    # be ~10 bindings x 1000. Bound: 16 MiB.
    assert grown < 16 * 2 ** 20, f"RSS grew by {grown / 2 ** 20:.1f} MiB over 1000 registrations"


def test_new_equal_domain_objects_reuse_registrations():
    # a Domain rebuilt with the same ops each time (as a server might per request) does not grow memory
    model = make_model(Inverse, "org.rel.same", {"X": (np.float32, [3, 3])}).SerializeToString()

    def batch(n):
        for _ in range(n):
            so = ortcustom.session_options(Domain("org.rel.same").add(Inverse, GroupNorm))
            del so

    batch(100)
    gc.collect()
    before = rss_bytes()
    batch(1000)
    gc.collect()
    assert rss_bytes() - before < 16 * 2 ** 20
    check_inverse_works(ort.InferenceSession(model, ortcustom.session_options(Domain("org.rel.same").add(Inverse)),
                                             providers=CPU))
