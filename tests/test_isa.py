"""The instruction-set passes of the CPU kernels (kernels/cpu/isa.h): baseline x86-64, AVX2+FMA and
AVX-512, one picked per process; ORTCUSTOM_ISA=baseline|avx2|avx512 caps it. The kernel tests run
again, in a subprocess, on every pass this machine can run but the one this process runs."""
import os
import subprocess
import sys

import pytest

from helpers import run_python
from ortcustom.library_source import kernel_name
from ortcustom.ops import ALL, contrib

HERE = os.path.dirname(os.path.abspath(__file__))
PASSES = ("baseline", "avx2", "avx512")  # ORTCUSTOM_ISA values, in order
NAMES = {"baseline": "baseline", "avx2": "avx2+fma", "avx512": "avx512"}  # what cpu_isa() says
# each built-in kernel's tests (test_<kernel>.py, where there is one) and the direct calls'
KERNEL_TESTS = ("test_kernels_direct.py",) + tuple(dict.fromkeys(
    f"test_{kernel_name(op)}.py" for op in ALL + contrib.ALL
    if os.path.exists(os.path.join(HERE, f"test_{kernel_name(op)}.py"))))


def isa_env(**set_vars):
    env = {k: v for k, v in os.environ.items() if k not in ("ORTCUSTOM_ISA", "ORTCUSTOM_NO_AVX2")}
    env.update(set_vars)
    return env


def cpu_isa(env):
    r = run_python('from ortcustom.native import builtin_info; print(builtin_info("cpu_isa"))', env)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def runnable_passes():
    """The ORTCUSTOM_ISA values this machine can run: up to the pass it picks when not capped."""
    best = cpu_isa(isa_env())
    return PASSES[:[NAMES[p] for p in PASSES].index(best) + 1]


def other_passes():
    """The runnable passes but the one this process runs (the plain test run covers it)."""
    from ortcustom.native import builtin_info

    return [p for p in runnable_passes() if NAMES[p] != builtin_info("cpu_isa")]


@pytest.mark.parametrize("value", PASSES)
def test_env_var_caps_the_pass(value):
    runnable = runnable_passes()
    want = value if value in runnable else runnable[-1]
    assert cpu_isa(isa_env(ORTCUSTOM_ISA=value)) == NAMES[want]


def test_no_avx2_still_means_baseline_and_unknown_values_cap_nothing():
    assert cpu_isa(isa_env(ORTCUSTOM_NO_AVX2="1")) == "baseline"
    assert cpu_isa(isa_env(ORTCUSTOM_ISA="sse9")) == NAMES[runnable_passes()[-1]]


@pytest.mark.parametrize("value", PASSES)
def test_kernel_tests_pass_on_every_pass(value):
    if value not in other_passes():
        pytest.skip(f"{value}: not runnable here, or this process's pass")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "not every_pass",
                        *(os.path.join(HERE, f) for f in KERNEL_TESTS)],
                       env=isa_env(ORTCUSTOM_ISA=value), capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]


def test_cache_keeps_bytes_is_an_amd_cores_l3_and_0_elsewhere():
    """What GroupNorm weighs its non-temporal stores against: the L3 of this core's complex on AMD
    (as Linux's cache topology reports it), 0 on other CPUs."""
    from ortcustom.native import builtin_info

    keeps = builtin_info("cache_keeps_bytes")
    with open("/proc/cpuinfo") as f:
        vendor = next((line.split(":", 1)[1].strip() for line in f if line.startswith("vendor_id")), "")
    if vendor != "AuthenticAMD":
        assert keeps == 0
        return
    l3 = "/sys/devices/system/cpu/cpu0/cache/index3/size"
    if not os.path.exists(l3):
        pytest.skip(f"{l3} is missing: no L3 size to compare with")
    with open(l3) as f:
        size = f.read().strip()  # e.g. 32768K
    assert size.endswith("K") and keeps == int(size[:-1]) * 1024
