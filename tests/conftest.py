"""Fixtures shared by the test files: module-scoped sessions of the built-in ops and a Python op,
with unknown shapes (everything reaches the kernels)."""
import numpy as np
import pytest

from helpers import session
from known_good import GN_DOM, INV_DOM, PY_DOM, Double
from ortcustom.ops import GroupNorm, Inverse


@pytest.fixture(scope="module")
def inv_sess():
    return session(Inverse, INV_DOM, {"X": (np.float32, None)})  # unknown rank: everything reaches us


@pytest.fixture(scope="module")
def gn_sess():
    return session(GroupNorm, GN_DOM, {"X": (np.float32, None), "num_groups": (np.int64, None),
                                       "scale": (np.float32, None), "bias": (np.float32, None)})


@pytest.fixture(scope="module")
def py_sess():
    return session(Double, PY_DOM, {"X": (np.float32, None)})

