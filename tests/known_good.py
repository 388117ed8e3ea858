"""Ops, domains and known-good runs shared by the robustness tests: every bad case is one session,
a bad run (a clear error naming the op and the node, or a documented result), then a good run of
the same session that must be right (check_inverse_works, check_group_norm_works)."""
import numpy as np

from ortcustom import Domain, Input, Op, Output
from ortcustom.ops import GroupNorm, Inverse


def _double(X):
    return X * X.dtype.type(2)


Double = Op("Double", inputs=[Input("X", "T")], outputs=[Output("Y", "T", shape="X")],
            types={"T": ["float", "double"]}, compute=_double)

GOOD_INV = 2 * np.eye(3, dtype=np.float32)
GOOD_GN = {"X": np.arange(12, dtype=np.float32).reshape(1, 4, 3), "num_groups": np.array(2, np.int64)}


def check_inverse_works(sess):
    np.testing.assert_allclose(sess.run(None, {"X": GOOD_INV})[0], GOOD_INV / 4)


def gn_feeds(feeds):
    """`feeds` for gn_sess (whose graph takes X, num_groups, scale and bias): scale 1, bias 0 unless given."""
    x = feeds["X"]
    c = x.shape[1] if x.ndim >= 2 else 1
    out = {"scale": np.ones(c, x.dtype), "bias": np.zeros(c, x.dtype)}
    out.update(feeds)
    return out


def check_group_norm_works(sess):
    feeds = gn_feeds(GOOD_GN) if len(sess.get_inputs()) == 4 else dict(GOOD_GN)
    ref = GroupNorm.reference(GOOD_GN["X"], np.array(2))
    np.testing.assert_allclose(sess.run(None, feeds)[0], ref, rtol=1e-5, atol=1e-5)


INV_DOM = Domain("org.rel.inv").add(Inverse)
GN_DOM = Domain("org.rel.gn").add(GroupNorm)
PY_DOM = Domain("org.rel.py").add(Double)
