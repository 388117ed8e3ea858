"""The kernel contract enforced at the boundary: kernels that break it one way each
(tests/native/contract_kernels.cpp) give a clear error naming the op (and the node in a session),
the same in a session and a direct call, and the process goes on (each path probed in a process of
its own: a crash there fails these tests, not the run)."""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import ortcustom

HERE = Path(__file__).parent

# kernel -> the words its error must hold, in both paths
BREACHES = {
    "rank_negative": "output Y: the kernel gave rank -1; outputs have rank 0 to 16",
    "rank_17": "output Y: the kernel gave rank 17; outputs have rank 0 to 16",
    "twice": "output Y: the kernel asked for it twice",
    "no_output": "the kernel returned without allocating output Y",
    "silent_fail": "the kernel failed (status 2) without saying why",
    "wrong_shape": "output Y: the kernel gave shape (7,); the op declares it has the shape of input X, (2, 3)",
    "nine_scratch": "the kernel asked for more than 8 scratch buffers",
    "throw_compute": "the kernel's compute threw a C++ exception: compute went wrong",
    "throw_create": "the kernel's create threw a C++ exception: create went wrong",
}

PROBE = textwrap.dedent("""
    import gc, json, sys
    import numpy as np, onnxruntime as ort, ortcustom
    from ortcustom import Domain, Input, Op, Output, kernels
    from ortcustom.testing import make_model

    path, names, direct = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3] == "direct"
    lib = ortcustom.load_kernels(path)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = {}

    def op(name, n_in=1):
        ins = [Input("X", "float")] if n_in == 1 else [Input(f"I{i}", "float") for i in range(n_in)]
        return Op(name.title().replace("_", ""), ins, [Output("Y", "float", shape=ins[0].name)], native=lib[name])

    def run(o, feeds):
        if direct:
            return kernels.call(o, *feeds.values())
        d = Domain("contract." + o.name).add(o)
        sess = ort.InferenceSession(make_model(o, d, feeds).SerializeToString(), ortcustom.session_options(d),
                                    providers=["CPUExecutionProvider"])
        return sess.run(None, feeds)[0]

    for name in names:
        try:
            run(op(name), {"X": x})
            out[name] = "no error"
        except Exception as e:
            out[name] = type(e).__name__ + ": " + str(e)
    good = op("good")
    out["after"] = bool(np.array_equal(run(good, {"X": x}), x))  # the process goes on
    for name in ("throw_destroy", "scratch_in_tasks"):
        o = op(name)
        for _ in range(3):
            y = run(o, {"X": x})
        out[name] = bool(np.array_equal(y, x))
        gc.collect()
    # 8 tasks on ORT's pool (or OpenMP's) each take 64 KiB of scratch: 512 KiB a run if it leaked
    o = op("scratch_in_tasks")
    d = Domain("contract.rss").add(o)
    sess = None if direct else ort.InferenceSession(make_model(o, d, {"X": x}).SerializeToString(),
                                                    ortcustom.session_options(d), providers=["CPUExecutionProvider"])
    once = (lambda: kernels.call(o, x)) if direct else (lambda: sess.run(None, {"X": x}))
    rss = lambda: int(open("/proc/self/statm").read().split()[1]) * 4096
    for _ in range(50):
        once()
    before = rss()
    for _ in range(2000):
        once()
    out["scratch_rss_mib"] = (rss() - before) / 2**20
    try:
        run(op("long_utf8_message"), {"X": x})
    except Exception as e:
        msg = str(e)
        out["utf8"] = [msg.count("\\u00e9") > 400, "\\ufffd" not in msg]
    feeds = {f"I{i}": x for i in range(20)}
    out["twenty"] = bool(np.array_equal(run(op("twenty_inputs", 20), feeds), x))
    for name in ("no_signatures", "bad_inplace"):
        try:
            op(name).kernel
            out[name] = "no error"
        except ValueError as e:
            out[name] = str(e)
    print("RESULT " + json.dumps(out))
""")


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    from helpers import compile_kernels

    return compile_kernels([HERE / "native" / "contract_kernels.cpp"],
                           tmp_path_factory.mktemp("contract") / "contract_kernels.so")


@pytest.fixture(scope="module", params=["session", "direct"])
def probed(request, library):
    env = dict(os.environ, OMP_NUM_THREADS="2")
    r = subprocess.run([sys.executable, "-c", PROBE, str(library), json.dumps(list(BREACHES)), request.param],
                       capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, f"the {request.param} probe process died ({r.returncode}):\n{r.stdout}\n{r.stderr[-3000:]}"
    line = next(l for l in r.stdout.splitlines() if l.startswith("RESULT "))
    return request.param, json.loads(line[len("RESULT "):])


@pytest.mark.parametrize("kernel", list(BREACHES))
def test_a_breach_is_a_clear_error(probed, kernel):
    path, got = probed
    op = kernel.title().replace("_", "")
    where = f"{op} (node 'n0'): " if path == "session" else f"{op}: "
    assert where + BREACHES[kernel] in got[kernel], got[kernel]


def test_the_process_goes_on(probed):
    _, got = probed
    assert got["after"] is True
    assert got["throw_destroy"] is True  # an exception out of destroy is swallowed, not fatal


def test_scratch_from_parallel_for_tasks_is_safe(probed):
    assert probed[1]["scratch_in_tasks"] is True
    assert probed[1]["scratch_rss_mib"] < 64  # 1 GiB if each run's 512 KiB leaked


def test_a_long_message_is_not_cut_inside_a_character(probed):
    assert probed[1]["utf8"] == [True, True]


def test_create_sees_every_declared_input(probed):
    assert probed[1]["twenty"] is True


def test_kernels_that_cannot_be_checked_are_refused_when_attached(probed):
    _, got = probed
    assert "states no signatures" in got["no_signatures"]
    assert "lets output Y be written over input 5; the op has 1 inputs" in got["bad_inplace"]


def _task_threads(library):
    from ortcustom import Input, Op, Output

    return Op("TaskThreads", [Input("X", "float")], [Output("Y", "float")],
              native=ortcustom.load_kernels(library)["task_threads"])


def test_direct_calls_run_tasks_on_the_callers_cores(library):
    """A direct call (and so a torch op) runs a kernel's tasks on a thread pool of
    ortcustom.kernels.threads() threads (torch's count when torch is imported), not serially."""
    from ortcustom import kernels

    op = _task_threads(library)
    x = np.full(16, 2000, np.float32)  # 2 ms each: a pool of 2 takes them all
    try:
        kernels.set_threads(2)
        assert set(kernels.call(op, x).tolist()) == {0, 1}
        kernels.set_threads(1)
        assert set(kernels.call(op, x).tolist()) == {0}
    finally:
        kernels.set_threads(None)


@pytest.mark.parametrize("threads", [1, 2, 3, 5])
def test_a_direct_call_runs_each_task_once(library, threads):
    """Fewer tasks than threads, as many, more, and not a multiple: each task runs exactly once."""
    from ortcustom import kernels

    op = _task_threads(library)
    try:
        kernels.set_threads(threads)
        for n in range(1, 10):
            y = kernels.call(op, np.full(n, 50, np.float32))
            assert (y >= 0).all(), (threads, n, y)
            assert len(set(y.tolist())) <= min(threads, n)
    finally:
        kernels.set_threads(None)


def test_a_direct_calls_threads_each_start_on_their_own_contiguous_share(library):
    """Thread k first runs the k-th contiguous share of the tasks (the same data on every call,
    while its cache may still hold it), as ONNX Runtime's pool does; OpenMP's dynamic schedule dealt
    them out in turn (0, 2, 4, ... to one thread). A thread that finishes its share takes the others'
    leftovers, so a late thread can cost the split: one call of five must show it."""
    from ortcustom import kernels

    op = _task_threads(library)
    try:
        kernels.set_threads(2)
        got = [kernels.call(op, np.full(8, 2000, np.float32)).tolist() for _ in range(5)]
    finally:
        kernels.set_threads(None)
    assert [0, 0, 0, 0, 1, 1, 1, 1] in got, got


def test_a_direct_call_runs_every_task_when_openmp_grants_fewer_threads(library):
    """OMP_THREAD_LIMIT=1: a call asking for 4 threads gets the calling thread alone, which must then
    run the other threads' shares too."""
    code = textwrap.dedent(f"""
        import numpy as np, ortcustom
        from ortcustom import Input, Op, Output, kernels
        op = Op("TaskThreads", [Input("X", "float")], [Output("Y", "float")],
                native=ortcustom.load_kernels({str(library)!r})["task_threads"])
        kernels.set_threads(4)
        print("RESULT", kernels.call(op, np.zeros(10, np.float32)).tolist())
    """)
    env = dict(os.environ, OMP_THREAD_LIMIT="1")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "RESULT " + str([0.0] * 10) in r.stdout, r.stdout


def test_a_direct_call_gets_its_own_bindings_types(library):
    """Two type constraints on two optional inputs: a call with only A (double) and one with only B
    (double) bind different rows; the kernel must see each call's own (a cache keyed by the types
    alone once handed the second call the first one's row)."""
    from ortcustom import Input, Op, Output, kernels

    op = Op("BindingRow", [Input("A", "T", optional=True), Input("B", "U", optional=True)], [Output("Y", "float")],
            types={"T": ("float", "double"), "U": ("float", "double")},
            native=ortcustom.load_kernels(library)["binding_row"])
    one = np.ones(1)
    assert list(kernels.call(op, one, None)) == [11, 1]  # A double, U unbound: its first type, float
    assert list(kernels.call(op, None, one)) == [1, 11]
