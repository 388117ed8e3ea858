"""The benchmark runner's machine report (benchmarks/machine.py, run.py): which CPU it ran on, the
FMA peak measured in the same run with the kernels library's loop, the fraction of that peak, and
RESULTS.md kept as one section per CPU kind. Logic only: no timing is judged here."""
import ctypes
import os
import subprocess
import sys

import pytest

from helpers import run_python

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks import machine, run  # noqa: E402

WIDTH = {"baseline": 4, "avx2+fma": 8, "avx512": 16}  # float32 lanes of each pass


def test_cpu_info_names_the_cpu_and_the_kernels_pass():
    info = machine.cpu_info()
    from ortcustom.native import builtin_info

    assert info["isa"] == builtin_info("cpu_isa")
    assert info["cores"] == len(os.sched_getaffinity(0))
    assert info["model"] and info["kind"]
    line = machine.cpu_line(info)
    assert info["model"] in line and info["isa"] in line and f"{info['cores']} cores" in line
    assert info["keeps"] == builtin_info("cache_keeps_bytes")
    assert f"cache kept between calls {info['keeps'] / 2**20:g} MiB" in line
    if os.path.exists("/proc/cpuinfo"):
        assert info["family"] is not None and f"family {info['family']} model {info['model_number']}" in line


@pytest.mark.parametrize("vendor,family,model,name,kind", [
    ("AuthenticAMD", 25, 17, "AMD EPYC 9R14 96-Core Processor", "AMD EPYC Zen 4"),
    ("GenuineIntel", 6, 207, "INTEL(R) XEON(R) PLATINUM 8581C CPU @ 2.30GHz", "INTEL(R) XEON(R) PLATINUM 8581C CPU @ 2.30GHz Emerald Rapids"),
    ("GenuineIntel", 6, 207, "Intel(R) Xeon(R) Platinum 8581C", "Intel Xeon Emerald Rapids"),
    ("GenuineIntel", 6, 1, "Some Other CPU", "Some Other CPU, family 6 model 1"),
])
def test_the_kind_is_the_brand_and_microarchitecture(monkeypatch, vendor, family, model, name, kind):
    monkeypatch.setattr(machine, "_cpuinfo", lambda: {"vendor_id": vendor, "cpu family": str(family),
                                                      "model": str(model), "model name": name})
    assert machine.cpu_info()["kind"] == kind


def test_the_fma_loop_counts_its_flops_in_the_pass_the_kernels_use():
    info = machine.cpu_info()
    fn = machine._fma_loop()
    # 12 chains of one multiply-add (2 flops) per lane per iteration
    assert fn(1000) == 2 * 12 * WIDTH[info["isa"]] * 1000
    assert fn(0) == 0


@pytest.mark.parametrize("isa", ["baseline", "avx2"])
def test_the_fma_loop_follows_a_capped_pass(isa):
    if isa == "avx2" and machine.cpu_info()["isa"] == "baseline":
        pytest.skip("this CPU has no AVX2")
    r = run_python("import sys; sys.path.insert(0, %r)\nfrom benchmarks import machine\n"
                   "print(machine._fma_loop()(10))" % ROOT, {**os.environ, "ORTCUSTOM_ISA": isa})
    assert r.returncode == 0, r.stderr
    assert float(r.stdout) == 2 * 12 * WIDTH["baseline" if isa == "baseline" else "avx2+fma"] * 10


def test_fma_peak_runs_on_several_threads_at_once():
    p1 = machine.fma_peak(1, seconds=0.005, reps=1)
    p2 = machine.fma_peak(2, seconds=0.005, reps=1)
    assert p1 > 0 and p2 > 0


def test_the_handoff_passes_a_counter_between_two_threads_in_order():
    fn = machine._handoff()
    ns = ctypes.c_double(-1.0)
    mask = os.sched_getaffinity(0)
    assert fn(1000, ctypes.byref(ns)) == 2000 and ns.value > 0  # each side saw every value, in order
    assert os.sched_getaffinity(0) == mask  # (the two threads were pinned: the caller's CPUs given back)
    assert fn(0, ctypes.byref(ns)) == 0 and ns.value == 0.0
    assert machine.handoff_ns(100) > 0
    # on one CPU the two threads take turns on it (and the call ends)
    r = run_python("import os, sys; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); "
                   "sys.path.insert(0, %r)\nfrom benchmarks import machine\n"
                   "print(machine.handoff_ns(50, 1), os.sched_getaffinity(0))" % ROOT, dict(os.environ))
    assert r.returncode == 0, r.stderr
    ns1, cpus = r.stdout.split(" ", 1)
    assert float(ns1) > 0 and cpus.strip() == "{%d}" % min(mask)


def test_machine_noise_is_the_spread_of_a_fixed_loop():
    spread = machine.noise(3, 0.002, 0.0)
    assert 1.0 <= spread < 1000
    spread = machine.noise(3, 0.002, 0.0, threads=2)
    assert 1.0 <= spread < 1000
    spread = machine.memory_noise(3, 0.002, 0.0, nbytes=1 << 20)
    assert 1.0 <= spread < 1000


def test_the_noise_loop_runs_on_each_thread_at_once():
    import threading

    together = threading.Barrier(3, timeout=10)  # passed only by three threads running at once
    passed = []

    def fn():
        together.wait()
        passed.append(threading.get_ident())

    machine._on_threads(fn, 3)
    assert len(set(passed)) == 3


def test_each_rep_runs_once_untimed_then_its_loops(monkeypatch):
    """A rep: the pause, one untimed run (it wakes the cores the pause let sleep), then `loops`
    timed runs; reps rotate the impls' order."""
    from benchmarks import _common as C

    calls = []
    clock = iter(range(10 ** 6))
    monkeypatch.setattr(C.time, "sleep", lambda s: calls.append("pause"))
    monkeypatch.setattr(C.time, "perf_counter", lambda: next(clock) * 0.001)
    impls = [C.Impl(k, k, (lambda k=k: calls.append(k))) for k in ("a", "b")]
    samples = C.measure(impls, reps=2, warmup=1, min_time=0.0025, settle=0.1)
    # the loop count comes from one timed run: 1 ms by the fake clock -> 3 runs for 2.5 ms
    start = ["pause", "a", "a", "pause", "b", "b"]
    rep0 = ["pause", "a"] + ["a"] * 3 + ["pause", "b"] + ["b"] * 3
    rep1 = ["pause", "b"] + ["b"] * 3 + ["pause", "a"] + ["a"] * 3
    assert calls == start + rep0 + rep1
    assert set(samples) == {"a", "b"} and all(len(v) == 2 for v in samples.values())


def test_inverse_flops():
    assert machine.inverse_flops(1024) == 2 * 1024 ** 3


def _write(path, kind, text):
    run.write_results(str(path), str(path.parent / "p.png"), [text], kind)


def test_results_keep_one_section_per_cpu_kind(tmp_path):
    path = tmp_path / "RESULTS.md"
    _write(path, "AMD EPYC Zen 4", "amd run 1")
    _write(path, "Intel Xeon Emerald Rapids", "intel run 1")
    _write(path, "AMD EPYC Zen 4", "amd run 2")
    text = path.read_text()
    sections = run._sections(text)
    assert list(sections) == ["AMD EPYC Zen 4", "Intel Xeon Emerald Rapids"]
    assert "amd run 2" in sections["AMD EPYC Zen 4"] and "amd run 1" not in text
    assert "intel run 1" in sections["Intel Xeon Emerald Rapids"]
    assert text.startswith("# Benchmark results")


def test_the_checked_in_results_are_per_cpu_kind():
    with open(os.path.join(ROOT, "benchmarks", "RESULTS.md")) as f:
        sections = run._sections(f.read())
    assert "AMD EPYC Zen 4" in sections and "Intel Xeon Emerald Rapids" in sections
    for kind, text in sections.items():
        png = text.split("](", 1)[1].split(")", 1)[0] if "](" in text else None
        if png:
            assert png == run.plot_name(kind) and os.path.exists(os.path.join(ROOT, "benchmarks", png))


def test_the_runner_prints_the_cpu_the_peak_and_the_fraction(tmp_path):
    res = tmp_path / "R.md"
    r = subprocess.run([sys.executable, "-m", "benchmarks", "--quick", "--only", "inverse",
                        "--results", str(res), "--plot", str(tmp_path / "p.png")],
                       cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    info = machine.cpu_info()
    for text in (r.stdout, res.read_text()):
        assert "CPU: " + machine.cpu_line(info) in text
        assert "FMA peak: float32" in text and "GFLOP/s on 1 thread" in text
        assert "Fraction of the FMA peak" in text
        assert "inverse 1x64 float32" in text.split("Fraction of the FMA peak")[1]
        assert "% of peak" in text
        assert "spread = slowest / fastest rep" in text and "spread  note" in text
        assert "machine noise: fixed work" in text and "machine noise at the end: spread FMA loop on 2 thread(s)" in text
        assert "16 MiB copies" in text and "one untimed run after it" in text
        assert "handoff: a value one thread writes reaches another in " in text and "; handoff " in text
    assert list(run._sections(res.read_text())) == [info["kind"]]


def test_a_thread_count_other_than_two_gets_its_own_section(tmp_path):
    """--threads 1: every impl on one thread (ORT's intra-op pool, torch, the BLAS pools), written as
    the section "<kind>, 1 thread" beside the kind's 2-thread section, which stays."""
    assert run.section_name("AMD EPYC Zen 4", 2) == "AMD EPYC Zen 4"
    assert run.section_name("AMD EPYC Zen 4", 1) == "AMD EPYC Zen 4, 1 thread"
    assert run.section_name("AMD EPYC Zen 4", 4) == "AMD EPYC Zen 4, 4 threads"
    kind = machine.cpu_info()["kind"]
    res = tmp_path / "R.md"
    _write(res, kind, "the 2-thread run")
    r = subprocess.run([sys.executable, "-m", "benchmarks", "--quick", "--threads", "1", "--only", "dispatch",
                        "--results", str(res), "--plot", str(tmp_path / "p.png")],
                       cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    sections = run._sections(res.read_text())
    assert list(sections) == [kind, kind + ", 1 thread"]
    assert "the 2-thread run" in sections[kind]
    text = sections[kind + ", 1 thread"]
    assert "threads: 1 for every CPU peer: ORT intra_op_num_threads=1; torch.set_num_threads(1)" in text
    assert "GFLOP/s on 1 thread\n" in text  # (no second count)
    assert "handoff" not in text  # (no second thread to hand off to)
    bad = subprocess.run([sys.executable, "-m", "benchmarks", "--quick", "--threads", "0"], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert bad.returncode != 0 and "ORTCUSTOM_BENCH_THREADS='0': a thread count must be >= 1" in bad.stderr

