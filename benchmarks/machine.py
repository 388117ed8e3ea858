"""The machine a benchmark ran on: the CPU (model, family/model, the cores this process may use,
its kind, the instruction-set pass ortcustom's kernels chose) and its float32 FMA peak, measured in
the same run with the kernels library's own multiply-add loop (`ortcustom_info_fma_loop`: no
compiler needed), so that "fraction of peak" means the same on every CPU."""
from __future__ import annotations

import ctypes
import os
import platform
import threading
import time

# (vendor, family, model range) -> microarchitecture, for the kinds seen so far (others: the model)
_KINDS = [
    ("AuthenticAMD", 25, range(0x10, 0x20), "Zen 4"),
    ("AuthenticAMD", 25, range(0x60, 0x80), "Zen 4"),
    ("AuthenticAMD", 25, range(0xA0, 0xB0), "Zen 4c"),
    ("AuthenticAMD", 25, range(0x00, 0x10), "Zen 3"),
    ("AuthenticAMD", 25, range(0x20, 0x60), "Zen 3"),
    ("AuthenticAMD", 26, range(0x00, 0x100), "Zen 5"),
    ("GenuineIntel", 6, range(0xCF, 0xD0), "Emerald Rapids"),
    ("GenuineIntel", 6, range(0x8F, 0x90), "Sapphire Rapids"),
    ("GenuineIntel", 6, range(0xAD, 0xAF), "Granite Rapids"),
    ("GenuineIntel", 6, range(0x6A, 0x6D), "Ice Lake"),
    ("GenuineIntel", 6, range(0x55, 0x56), "Skylake/Cascade Lake"),
]


def _cpuinfo() -> dict[str, str]:
    """The first processor's fields of /proc/cpuinfo (empty where there is none)."""
    out: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip():
                    if out:
                        break
                    continue
                k, _, v = line.partition(":")
                out.setdefault(k.strip(), v.strip())
    except OSError:
        pass
    return out


def cpu_info() -> dict:
    """model, vendor, family, model_number, kind (vendor-level name + microarchitecture where
    known: the RESULTS.md section), cores (usable by this process), isa (the kernels' pass),
    keeps (the kernels' cache_keeps_bytes: what GroupNorm's non-temporal stores are weighed against)."""
    from ortcustom.native import builtin_info

    ci = _cpuinfo()
    model = ci.get("model name") or platform.processor() or platform.machine() or "unknown"
    vendor = ci.get("vendor_id", "")
    family = int(ci["cpu family"]) if ci.get("cpu family", "").isdigit() else None
    number = int(ci["model"]) if ci.get("model", "").isdigit() else None
    arch = next((name for v, fam, models, name in _KINDS if v == vendor and fam == family and number in models), "")
    brand = ("AMD EPYC" if "EPYC" in model else "Intel Xeon" if "Xeon" in model else model)
    kind = brand + (f" {arch}" if arch else (f", family {family} model {number}" if family is not None else ""))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return {"model": model, "vendor": vendor, "family": family, "model_number": number, "kind": kind,
            "cores": cores, "isa": builtin_info("cpu_isa"), "keeps": builtin_info("cache_keeps_bytes")}


def cpu_line(info: dict) -> str:
    fam = f"family {info['family']} model {info['model_number']}" if info["family"] is not None else "family ?"
    return (f"{info['model']} ({info['kind']}; {info['vendor'] or '?'} {fam}); {info['cores']} cores usable; "
            f"kernels' ISA pass {info['isa']}; cache kept between calls {info['keeps'] / 2**20:g} MiB")


def _fma_loop():
    from ortcustom import native

    fn = native.load_kernels(native.builtin_library_path())._handle.ortcustom_info_fma_loop
    fn.restype = ctypes.c_double
    fn.argtypes = [ctypes.c_int64]
    return fn  # a ctypes.CDLL function: it releases the GIL, so threads run it in parallel


def _handoff():
    from ortcustom import native

    fn = native.load_kernels(native.builtin_library_path())._handle.ortcustom_info_handoff
    fn.restype = ctypes.c_int64
    fn.argtypes = [ctypes.c_int64, ctypes.POINTER(ctypes.c_double)]
    return fn  # (rounds, &ns one way) -> handoffs seen in order; releases the GIL


def handoff_ns(rounds: int = 4000, runs: int = 5) -> float:
    """The time (ns) for a value one thread writes to reach another (the kernels library's
    ortcustom_info_handoff: a counter passed back and forth `rounds` times), the median of `runs`
    runs (a run where a thread lost its core counts once): what each parallel step of a kernel pays
    per handoff; 0.0 if no second thread could start."""
    fn = _handoff()
    got = []
    for _ in range(runs):
        ns = ctypes.c_double()
        if fn(rounds, ctypes.byref(ns)) != 2 * rounds:
            return 0.0
        got.append(ns.value)
    return sorted(got)[len(got) // 2]


def _iterations(fn, seconds: float) -> int:
    """The count for which the FMA loop fn runs about `seconds` on one thread."""
    iters = 1000
    while True:
        t = time.perf_counter()
        fn(iters)
        t = time.perf_counter() - t
        if t >= seconds / 4 or iters > 1 << 40:
            break
        iters *= 4
    return max(1, int(iters * seconds / max(t, 1e-9)))


def fma_peak(threads: int, seconds: float = 0.05, reps: int = 3) -> float:
    """The float32 FMA rate (flop/s) of `threads` threads each running the kernels' loop at once,
    best of `reps` rounds of about `seconds`."""
    fn = _fma_loop()
    iters = _iterations(fn, seconds)
    best = 0.0
    for _ in range(reps):
        flops = [0.0] * threads
        start = threading.Barrier(threads + 1)

        def work(i):
            start.wait()
            flops[i] = fn(iters)

        pool = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
        for th in pool:
            th.start()
        start.wait()
        t = time.perf_counter()
        for th in pool:
            th.join()
        t = time.perf_counter() - t
        best = max(best, sum(flops) / t)
    return best


def _spread(fn, reps: int, pause: float) -> float:
    times = []
    for _ in range(max(2, reps)):
        time.sleep(pause)
        fn()  # untimed, as the runner's reps
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return max(times) / min(times)


def _on_threads(fn, threads: int):
    """fn() on `threads` threads at once (the calling one among them); returns when all are done."""
    if threads <= 1:
        fn()
        return
    pool = [threading.Thread(target=fn) for _ in range(threads - 1)]
    for th in pool:
        th.start()
    fn()
    for th in pool:
        th.join()


def noise(reps: int, rep_time: float, pause: float, threads: int = 1) -> float:
    """Slowest / fastest of `reps` timings of one fixed piece of work (the FMA loop, about
    `rep_time` long, on `threads` threads at once), each after `pause` seconds idle, as the runner
    times each rep: the spread the machine itself adds to compute (a shared VM's other tenants,
    clock changes, a core taken away), under which no impl's spread can be expected to fall."""
    fn = _fma_loop()
    iters = _iterations(fn, rep_time)
    return _spread(lambda: _on_threads(lambda: fn(iters), threads), reps, pause)


def memory_noise(reps: int, rep_time: float, pause: float, nbytes: int = 16 << 20) -> float:
    """The same for memory traffic: copies between two `nbytes` buffers (the size of a mid
    GroupNorm's input and output), about `rep_time` per rep, on one thread. On a shared VM this
    floor is higher than the FMA loop's: other tenants share the caches and memory bandwidth."""
    import numpy as np

    src = np.ones(nbytes // 8)
    dst = np.empty_like(src)
    t = time.perf_counter()
    np.copyto(dst, src)
    t = time.perf_counter() - t
    loops = max(1, int(rep_time / max(t, 1e-9)))

    def work():
        for _ in range(loops):
            np.copyto(dst, src)

    return _spread(work, reps, pause)


def inverse_flops(n: int) -> float:
    """Flops of one n x n inverse as the goal counts them (LU + triangular inversion, or
    Gauss-Jordan): 2 n^3."""
    return 2.0 * n ** 3
