"""The blocked CPU Inverse runs one parallel region per call (kernels/cpu/team.h: the first task is the
leader, the others help with its steps) and must not assume anything of how the host runs the region's
tasks: tests/native/inverse_runners.cpp builds the kernel with the runners of tests/native/runners.h,
which run them on the calling thread in order or backwards, one at a time each on a thread of its
own, or on a few threads at once (one of them late). Under each: the same bits as with no runner,
the inverse, no deadlock (each call in a thread given a time limit)."""
import ctypes

import numpy as np
import pytest

from helpers import assert_inverse, row_cycled, runner_library, well_conditioned, within_limit

from ortcustom import kernels


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    lib = runner_library(tmp_path_factory, "inverse.cpp", "inverse_runners")
    lib.team_check.argtypes = [ctypes.c_int] * 3
    for name in ("inverse_f32_with", "inverse_f64_with"):
        getattr(lib, name).argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                                       ctypes.c_int64]
    return lib


def kinds(lib):
    return range(lib.runner_kinds())


@pytest.mark.parametrize("tasks", [1, 2, 3, 64])
def test_team_runs_every_item_once_under_every_runner(lib, tasks):
    for kind in kinds(lib):
        assert within_limit(lib.team_check, kind, tasks, 40) == 0, (kind, tasks)


def invert(lib, kind, x):
    fn = lib.inverse_f32_with if x.dtype == np.float32 else lib.inverse_f64_with
    y = np.empty_like(x)
    assert within_limit(fn, kind, x.ctypes.data, y.ctypes.data, x.shape[0], x.shape[-1]) == 0
    return y


@pytest.mark.parametrize("dtype, n, batch", [(np.float32, 129, 1), (np.float32, 300, 2), (np.float32, 1000, 1),
                                             (np.float64, 384, 1), (np.float32, 200, 5)])
def test_inverse_has_the_same_bits_under_every_runner(lib, dtype, n, batch):
    """One panel and a bit (129); panels narrower than 128 (300, 1000); several matrices in one
    region (batch 2); the batch path (5 matrices, one per task)."""
    rng = np.random.default_rng(n)
    x = np.ascontiguousarray(row_cycled(rng, (batch, n, n), dtype))
    ref = invert(lib, 0, x)
    assert_inverse(x, ref)
    np.testing.assert_array_equal(ref, kernels.inverse(x))  # the library's build of the same code
    for kind in kinds(lib):
        np.testing.assert_array_equal(invert(lib, kind, x), ref, err_msg=f"runner {kind}")


def test_singular_gives_non_finite_under_a_pool(lib):
    rng = np.random.default_rng(3)
    x = well_conditioned(rng, (1, 300, 300), np.float32)
    x[0, 200] = x[0, 7]
    for kind in kinds(lib):
        assert not np.isfinite(invert(lib, kind, x)).all(), kind
