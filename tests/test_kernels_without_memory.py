"""The linear-algebra kernels when their own working memory cannot be had: each allocation site of
the kernel library fails in turn (tests/native/fail_malloc.c, LD_PRELOAD in a fresh interpreter: a
malloc that fails the kernels' calls, every call of one site, or only the first of all, or all of
them). Each op then gives what it gives with memory (a slower path: the update's products pack
nothing, the LU works in place in its output, the fused Solve falls back to the op's scratch, the
few-column triangular solve substitutes on X itself, the SVD's vectors come from the QR iteration)
or, where its working copy is what failed, a MemoryError naming the op and "out of memory" (in a
session: ORT's error naming the node). Never a crash nor a wrong result; the next call works."""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the shim replaces glibc's malloc")

_CHILD = r'''
import ctypes, json, sys, threading
import numpy as np
sys.path.insert(0, {here!r})
import ortcustom
from ortcustom import kernels
from ortcustom.ops import Cholesky, Eigh, Eigvalsh, Inverse, Qr, Slogdet, Solve, SolveTriangular, Svd, Svdvals
from helpers import session

shim = ctypes.CDLL(None)
shim.oc_malloc_faults.argtypes = (ctypes.c_void_p, ctypes.c_long, ctypes.c_long)
shim.oc_malloc_sites.argtypes = (ctypes.POINTER(ctypes.c_void_p), ctypes.c_int)
shim.oc_failed_mallocs.restype = ctypes.c_long

class DlInfo(ctypes.Structure):
    _fields_ = [("fname", ctypes.c_char_p), ("fbase", ctypes.c_void_p), ("sname", ctypes.c_char_p),
                ("saddr", ctypes.c_void_p)]

dladdr = ctypes.CDLL(None).dladdr
dladdr.argtypes = (ctypes.c_void_p, ctypes.POINTER(DlInfo))

def site_name(p):
    """library+offset (addr2line -e <library> <offset> names the line; the kernels' symbols are hidden)"""
    i = DlInfo()
    if not dladdr(p, ctypes.byref(i)) or not i.fname:
        return hex(p)
    return i.fname.decode().rsplit("/", 1)[-1] + "+" + hex(p - i.fbase)

ALL = 1 << 40
kernels.set_threads(2)
rng = np.random.default_rng(7)

def general(n, dt, batch=1):
    return (rng.standard_normal((batch, n, n)) + np.sqrt(n) * np.eye(n)).astype(dt)

def spd(n, dt):
    a = rng.standard_normal((n, n))
    return (a @ a.T / n + np.eye(n)).astype(dt)[None]

def invariants(op, out):
    """What the op determines uniquely (the factors of Qr, Eigh and Svd are not: their products)."""
    f = [np.asarray(x, np.float64) for x in (out if isinstance(out, tuple) else (out,))]
    t = lambda x: np.swapaxes(x, -1, -2)
    if op == "Svd":
        u, s, vh = f
        return [s, (u * s[..., None, :]) @ vh, t(u) @ u, vh @ t(vh)]
    if op == "Eigh":
        w, v = f
        return [w, (v * w[..., None, :]) @ t(v), t(v) @ v]
    if op == "Qr":
        q, r = f
        return [q @ r, t(q) @ q, np.tril(r, -1)]
    return f

def deviation(op, got, ref):
    return max(float(np.max(np.abs(g - r), initial=0)) / max(1.0, float(np.max(np.abs(r), initial=0)))
               for g, r in zip(invariants(op, got), invariants(op, ref)))

WARM = np.repeat(np.eye(4)[None] * 2, 4096, axis=0)

def fresh_thread(call, arm=None):
    """call() on a new thread: a single large LU keeps its working copy per thread between calls
    (solve.cpp's LuScratch), so on a thread that has one it would not be allocated again. The thread's
    OpenMP pool is started first (a batched inverse), then arm() sets the faults: on a fresh pool the
    helper could join the LU's team too late for the steps that need it there (LuUpdate's row blocks:
    their packing buffer is a site of its own), and a site seen once was missed 32 times in a row"""
    box = {{}}
    def run():
        try:
            kernels.inverse(WARM)
            if arm:
                arm()
            box["out"] = call()
        except Exception as e:
            box["error"] = e
    t = threading.Thread(target=run)
    t.start()
    t.join()
    if "error" in box:
        raise box["error"]
    return box["out"]

def attempt(op, call, ref, arm):
    try:
        got = fresh_thread(call, arm)
    except Exception as e:
        return {{"error": type(e).__name__ + ": " + str(e).splitlines()[0]}}
    return {{"dev": deviation(op, got, ref)}}

cases = []
for dt in (np.float32, np.float64):
    a2, a7 = general(200, dt), general(700, dt)
    b2, b7 = rng.standard_normal((1, 200, 3)).astype(dt), rng.standard_normal((1, 700, 3)).astype(dt)
    ab = general(300, dt, batch=2)
    bb = rng.standard_normal((2, 300, 5)).astype(dt)
    s2, s7 = spd(200, dt), spd(700, dt)
    t16 = np.tril(general(1600, dt))
    b16 = rng.standard_normal((1, 1600, 3)).astype(dt)
    t2 = np.tril(a2)
    bw = rng.standard_normal((1, 200, 100)).astype(dt)
    cases += [
        (Inverse, {{"X": a2}}, {{}}),
        (Solve, {{"A": a2, "B": b2}}, {{}}),
        (Solve, {{"A": a7, "B": b7}}, {{}}),
        (Solve, {{"A": ab, "B": bb}}, {{}}),
        (Slogdet, {{"A": a7}}, {{}}),
        (Slogdet, {{"A": general(60, dt, batch=3)}}, {{}}),  # a batch's padded copies (factor_padded)
        (Cholesky, {{"A": s7}}, {{}}),
        (Qr, {{"A": a2}}, {{}}),
        (Eigh, {{"A": s2}}, {{}}),
        (Svd, {{"A": a2}}, {{}}),
        (Svd, {{"A": rng.standard_normal((6, 40, 30)).astype(dt)}}, {{}}),
        (Svdvals, {{"A": a2}}, {{}}),
        (Eigvalsh, {{"A": s2}}, {{}}),
        (SolveTriangular, {{"A": t16, "B": b16}}, {{"upper": 0}}),
        (SolveTriangular, {{"A": t2, "B": bw}}, {{"upper": 0}}),
    ]

for op, inputs, attrs in cases:
    direct = lambda: kernels.call(op, *inputs.values(), **attrs)
    ref = direct()
    shim.oc_malloc_faults(None, 0, 0)
    fresh_thread(direct)
    buf = (ctypes.c_void_p * 256)()
    sites = list(buf[:shim.oc_malloc_sites(buf, 256)])
    runs = []
    modes = [("site " + site_name(s), s, 0, ALL) for s in sites] + [("first", None, 0, 1), ("all", None, 0, ALL)]
    for mode, site, first, count in modes:
        for _ in range(32):  # a site on a path the team's size picks (a hint: who has joined) may be missed
                             # (8 tries once missed one: a helper thread joins late on a fresh thread's pool)
            r = attempt(op.name, direct, ref, lambda: shim.oc_malloc_faults(site, first, count))
            r["failed"] = shim.oc_failed_mallocs()
            shim.oc_malloc_faults(None, 0, 0)
            if r["failed"]:
                break
        r["mode"] = mode
        runs.append(r)
    sess = session(op, ortcustom.Domain("ortcustom").add(op), {{k: (v.dtype, v.shape) for k, v in inputs.items()}},
                   attrs=attrs)
    r = attempt(op.name, lambda: tuple(sess.run(None, inputs)), ref, lambda: shim.oc_malloc_faults(None, 0, ALL))
    r["failed"] = shim.oc_failed_mallocs()
    shim.oc_malloc_faults(None, 0, 0)
    r["mode"] = "session, all"
    runs.append(r)
    print(json.dumps({{"op": op.name, "shapes": [list(v.shape) for v in inputs.values()],
                      "dtype": str(next(iter(inputs.values())).dtype), "runs": runs}}))
print("after", kernels.inverse(np.eye(300)[None] * 2)[0, 0, 0])
'''

# the ops that fall back to a slower path (never an error) when any of their allocations fails
FALLS_BACK = {"Solve", "Slogdet", "SolveTriangular"}


@pytest.fixture(scope="module")
def shim(tmp_path_factory):
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc) is None:
        pytest.skip(f"no C compiler ({cc}) to build the malloc shim")
    out = tmp_path_factory.mktemp("shim") / "fail_malloc.so"
    subprocess.run([cc, "-O1", "-std=c11", "-Wall", "-Werror", "-shared", "-fPIC", "-o", str(out),
                    os.path.join(HERE, "native", "fail_malloc.c"), "-ldl"], check=True)
    return str(out)


def test_every_allocation_site_failing_gives_the_result_or_a_clear_error(shim):
    env = dict(os.environ, LD_PRELOAD=shim, OC_FAIL_MALLOC_LIB="_kernels.so")
    r = subprocess.run([sys.executable, "-c", _CHILD.format(here=HERE)], capture_output=True, text=True,
                       timeout=600, env=env)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    lines = r.stdout.splitlines()
    assert lines[-1] == "after 0.5", lines[-3:]
    cases = [json.loads(line) for line in lines[:-1]]
    assert len(cases) == 30
    for c in cases:
        what = f"{c['op']} {c['shapes']} {c['dtype']}"
        tol = 1e-4 if c["dtype"] == "float32" else 1e-10
        runs = {run["mode"]: run for run in c["runs"]}
        sites = [m for m in runs if m.startswith("site ")]
        assert sites, f"{what}: no allocation of the kernels' own seen (the test would prove nothing)"
        # a site on a path the team's size picks (the LU's blocks and row blocks adapt to the helpers that have
        # joined) may not be reached again in 32 tries on a loaded machine (CI missed one of a 700 x 700 LU's
        # three times in one day, a warmed pool notwithstanding): its runs are still checked, and at least one
        # site of every case must have failed
        missed = [m for m in sites if runs[m]["failed"] == 0]
        assert len(missed) < len(sites), f"{what}: no site reached again: {missed}"
        for mode, run in runs.items():
            assert run["failed"] >= 1 or mode in missed, f"{what}, {mode}: nothing failed"
            if "error" in run:
                assert c["op"] not in FALLS_BACK, f"{what}, {mode}: {run['error']}"
                want = (f"MemoryError: {c['op']}: out of memory" if mode != "session, all"
                        else f"{c['op']} (node 'n0'): out of memory")
                assert want in run["error"], f"{what}, {mode}: {run['error']}"
            else:
                assert run["dev"] <= tol, f"{what}, {mode}: off by {run['dev']:.3g} (relative)"
        if c["op"] not in FALLS_BACK:  # their working copy is an allocation of their own: no result without it
            assert "error" in runs["all"] and "error" in runs["session, all"], what
