"""Shared by the test files: the `slow` marker (deselected unless `-m` names it: `pytest -m slow`),
and module-scoped sessions of the built-in ops and a Python op with unknown shapes (everything
reaches the kernels)."""
import numpy as np
import pytest

from helpers import session
from known_good import GN_DOM, INV_DOM, PY_DOM, Double
from ortcustom.ops import GroupNorm, Inverse


def pytest_collection_modifyitems(config, items):
    """Slow tests (the leak soak) run only when a -m expression mentions them: `pytest -m slow`."""
    if "slow" in (config.getoption("markexpr") or ""):
        return
    slow = [item for item in items if item.get_closest_marker("slow")]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if not item.get_closest_marker("slow")]


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

