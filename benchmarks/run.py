"""The plain runner: every case, ours and every peer side by side in one process; medians of a few
repetitions after warm-up; a table of times and ratios (ours / peer) and the goals; a PNG of ratios.

    python -m benchmarks              # full sizes; prints; plot to a temp dir
    python -m benchmarks --full       # full sizes; also writes this CPU's section of benchmarks/RESULTS.md and its ratios-<cpu>.png
    python -m benchmarks --quick      # tiny sizes, 1 rep: seconds (CI keeps the suite alive with it)
    python -m benchmarks --cuda       # adds the GPU cases (skipped, with the reason, when they cannot run)

Options: --plot PATH, --results PATH (RESULTS.md), --reps N, --only GROUP[,GROUP] (inverse,
group_norm, contrib_group_norm, torch_op_inverse, torch_op_group_norm, dispatch, cuda_inverse,
cuda_group_norm), --python-ops (append benchmarks/python_ops.py), --threads N (every impl's threads;
default 2; a count other than 2 gets its own section of RESULTS.md, "<CPU kind>, N thread(s)"). The
header names the instruction-set pass the CPU kernels ran (ORTCUSTOM_ISA=baseline|avx2|avx512 caps it).
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import sys
import tempfile
import time

if __package__ in (None, ""):  # python benchmarks/run.py
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    __package__ = "benchmarks"


def _threads_into_env(argv: list[str]) -> None:
    """--threads N, into the environment before _common is imported: it limits the BLAS pools by env
    vars before NumPy is imported (main checks that the count took effect)."""
    for i, arg in enumerate(argv):
        if arg == "--threads" and i + 1 < len(argv):
            os.environ["ORTCUSTOM_BENCH_THREADS"] = argv[i + 1]
        elif arg.startswith("--threads="):
            os.environ["ORTCUSTOM_BENCH_THREADS"] = arg.split("=", 1)[1]


_threads_into_env(sys.argv[1:])

from . import _common as C  # noqa: E402  (sets the BLAS thread env vars before NumPy, if needed)
from . import machine  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def _fmt_time(t: float | None) -> str:
    if t is None:
        return "n/a"
    if t < 1e-3:
        return f"{t * 1e6:.1f} us"
    if t < 1:
        return f"{t * 1e3:.3f} ms"
    return f"{t:.3f} s"


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", "-C", os.path.dirname(HERE), *args], capture_output=True, text=True,
                              timeout=10).stdout.strip()
    except Exception:
        return ""


def _gpu() -> str:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
        if out.returncode == 0 and out.stdout.strip():
            return "; ".join(out.stdout.strip().splitlines())
    except (OSError, subprocess.TimeoutExpired):
        pass
    return "none (no nvidia-smi / no NVIDIA GPU)"


def _version(mod: str) -> str:
    try:
        m = __import__(mod)
        return getattr(m, "__version__", "?")
    except Exception:
        return "not installed"


def environment(cpu: dict, peak: dict) -> list[tuple[str, str]]:
    import numpy as np

    import ortcustom
    from ortcustom.native import builtin_info

    C.limit_threads()
    blas = ""
    try:
        import threadpoolctl

        blas = ", ".join(sorted({f"{i['internal_api']} {i.get('version')} ({i['num_threads']} threads)"
                                 for i in threadpoolctl.threadpool_info()}))
    except ImportError:
        pass
    head = _git("rev-parse", "--short", "HEAD")
    dirty = " + uncommitted changes" if _git("status", "--porcelain", "--untracked-files=no") else ""
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return [
        ("date", datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")),
        ("CPU", machine.cpu_line(cpu)),
        ("machine", f"nproc {affinity} (os.cpu_count {os.cpu_count()}); {platform.machine()}, "
                    f"{platform.system()} {platform.release()}; load average {_loadavg()}"),
        ("FMA peak", f"float32, measured now with the kernels' {cpu['isa']} loop: {peak[1] / 1e9:.0f} GFLOP/s on 1 thread"
                     + (f", {peak[C.THREADS] / 1e9:.0f} on {C.THREADS}" if C.THREADS > 1 else "")),
        ("GPU", _gpu()),
        ("commit", f"{head or '?'}{dirty}"),
        ("versions", f"ortcustom {ortcustom.__version__} (CUDA build: {ortcustom.build_info()['cuda']}), "
                     f"onnxruntime {_version('onnxruntime')}, onnxruntime-extensions {_version('onnxruntime_extensions')}, "
                     f"torch {_version('torch')}, numpy {np.__version__}, cupy {_version('cupy')}, "
                     f"Python {platform.python_version()}"),
        ("CPU kernels", f"{builtin_info('cpu_isa')} pass (every case; the best this CPU runs unless ORTCUSTOM_ISA caps "
                        f"it: now {os.environ.get('ORTCUSTOM_ISA', 'unset')})"),
        ("threads", f"{C.THREADS} for every CPU peer: ORT intra_op_num_threads={C.THREADS}; "
                    f"torch.set_num_threads({C.THREADS}); NumPy BLAS via {C.THREAD_LIMITS}"),
        ("BLAS/OpenMP pools", blas or "(threadpoolctl not installed)"),
    ]


def _loadavg() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def measure_peak() -> dict[int, float]:
    """flop/s of the FMA loop on 1 thread and on C.THREADS threads (the threads every case gets)."""
    return {1: machine.fma_peak(1), C.THREADS: machine.fma_peak(C.THREADS)}


def format_peak(results, peak: dict[int, float]) -> list[str]:
    """Achieved GFLOP/s and fraction of the measured FMA peak of each single-matrix float32 inverse
    (2 n^3 flops), ours and every peer that ran."""
    lines = [f"Fraction of the FMA peak ({peak[C.THREADS] / 1e9:.0f} GFLOP/s on {C.THREADS} thread{'s' if C.THREADS > 1 else ''}, measured "
             f"in this run; an n x n inverse counted as 2 n^3 flops)", ""]
    for case, rows, _ in results:
        if not case.group == "inverse" or case.dtype != "float32" or case.shape[0] != 1:
            continue
        n = case.shape[1]
        for row in rows:
            if row["time"]:
                g = machine.inverse_flops(n) / row["time"]
                lines.append(f"  {case.key:34} {row['label']:32} {g / 1e9:7.1f} GFLOP/s  "
                             f"{100 * g / peak[C.THREADS]:5.1f}% of peak")
    return lines + [""]


def machine_noise(reps: int, min_time: float, settle: float) -> str:
    """The machine's own spread, for compute (the FMA loop) and for memory traffic (a copy)."""
    t = max(min_time, 0.02)
    return (f"FMA loop on {C.THREADS} thread(s) {machine.noise(reps, t, settle, C.THREADS):.2f}, "
            f"16 MiB copies {machine.memory_noise(reps, t, settle):.2f}")


def handoff() -> str:
    """The time a value one thread writes takes to reach another: every parallel step pays it, and on
    a VM it moves with where the host puts the vCPUs (on this project's Zen 5 VM ~40 or ~220 ns for
    seconds at a time, the LU's 2-thread time 1.8x with it)."""
    return f"{machine.handoff_ns():.0f} ns"


def run_case(case: C.Case, reps: int, warmup: int, min_time: float, settle: float, errors: list) -> list[dict]:
    """Rows for one case: {key, label, time (median), spread (slowest / fastest rep), note, info}."""
    import numpy as np

    rows, impls = [], []
    ref = None
    for key in C.IMPLS[case.group]:
        row = {"key": key, "label": C.LABELS[key], "time": None, "note": "", "info": key in C.INFO}
        rows.append(row)
        try:
            im = C.make_impl(case, key)
            if ref is None and im.expected is None:
                ref = C.reference(case)
            C.check(case, im, ref)
            impls.append(im)
        except C.Unavailable as e:
            row["note"] = str(e)
        except Exception as e:  # a broken peer or ours: reported, and the run fails at the end
            row["note"] = f"ERROR {type(e).__name__}: {str(e).splitlines()[0][:150]}"
            errors.append(f"{case.key} / {key}: {e!r}")
    del ref
    samples = C.measure(impls, reps, warmup, min_time, settle) if impls else {}
    for row in rows:
        got = samples.get(row["key"])
        row["time"] = float(np.median(got)) if got else None
        row["spread"] = max(got) / min(got) if got and min(got) > 0 else None
    del impls
    return rows


def ratios(case: C.Case, rows: list[dict]) -> dict[str, float]:
    """ours / peer for each timed peer, and "best" (ours / the fastest peer)."""
    t = {r["key"]: r["time"] for r in rows if r["time"] is not None}
    ours = next((t[k] for k in C.OURS if k in t), None)
    if ours is None:
        return {}
    out = {k: ours / v for k, v in t.items() if k not in C.OURS and k not in C.INFO}
    if out:
        out["best"] = max(out.values())  # largest ratio = fastest peer
    for g in case.goals:  # a goal for another of ours (e.g. the plain library): "<ours>/<peer>"
        if g.ours != "ours" and g.ours in t and g.peer in t:
            out[f"{g.ours}/{g.peer}"] = t[g.ours] / t[g.peer]
    return out


def evaluate(case: C.Case, r: dict[str, float], quick: bool) -> list[tuple[C.Goal, float | None, str]]:
    res = []
    for g in case.goals:
        v = r.get(g.peer if g.ours == "ours" else f"{g.ours}/{g.peer}")
        if v is None:
            status = "n/a (peer or ours did not run)"
        elif quick:
            status = "(quick: not judged)"
        else:
            status = "met" if v <= g.max_ratio else "NOT MET"
        res.append((g, v, status))
    return res


def format_table(results) -> list[str]:
    lines = []
    w = max([len(c.key) for c, _, _ in results] + [20])
    hdr = f"{'case':{w}}  {'impl':32} {'median':>11}  {'ours/impl':>9}  {'spread':>6}  note"
    lines += [hdr, "-" * len(hdr)]
    for case, rows, r in results:
        best_key = None
        if "best" in r:
            best_key = max((k for k in r if k != "best"), key=lambda k: r[k])
        for i, row in enumerate(rows):
            key = row["key"]
            if key in C.OURS:
                rat = "1.00"
            elif row["info"] and row["time"] and any(row2["time"] for row2 in rows if row2["key"] in C.OURS):
                ours = next(row2["time"] for row2 in rows if row2["key"] in C.OURS and row2["time"])
                rat = f"{ours / row['time']:.2f}"
            else:
                rat = f"{r[key]:.2f}" if key in r else "-"
            note = row["note"] or ("fastest peer" if key == best_key else "")
            spread = f"{row['spread']:.2f}" if row.get("spread") else "-"
            lines.append(f"{case.key if i == 0 else '':{w}}  {row['label']:32} {_fmt_time(row['time']):>11}  "
                         f"{rat:>9}  {spread:>6}  {note}")
        lines.append("")
    return lines


def format_goals(results, quick: bool) -> tuple[list[str], int, int]:
    lines = ["Goals (ratio = ours / peer time; lower is better)", ""]
    met = total = 0
    for case, _, r in results:
        for g, v, status in evaluate(case, r, quick):
            peer = "best peer" if g.peer == "best" else C.LABELS[g.peer]
            if g.peer == "best" and v is not None:
                best_key = max((k for k in r if k != "best"), key=lambda k: r[k])
                peer = f"best peer = {C.LABELS[best_key]}"
            lines.append(f"  {case.key:34} {g.text:52} {('%.2f' % v) if v is not None else '-':>6} "
                         f"(<= {g.max_ratio:.3g}) vs {peer}: {status}")
            total += 1
            met += status == "met"
    if not quick:
        lines += ["", f"  {met} of {total} goals met"]
    return lines, met, total


def plot(results, path: str, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    peers = []
    for case, _, r in results:
        for k in r:
            if k not in peers:
                peers.append(k)
    peers.sort(key=lambda k: (k == "best", k))
    palette = [plt.cm.tab10(i) for i in (0, 1, 2, 4, 5, 6, 8, 9)]  # no red: red is the goal
    colors = {k: ("0.55" if k == "best" else palette[i % len(palette)]) for i, k in enumerate(peers)}
    fig, ax = plt.subplots(figsize=(max(8, 0.9 * len(results) + 3), 6))
    x, ticks, labels, seen = 0.0, [], [], set()
    for case, _, r in results:
        ks = [k for k in peers if k in r]
        if not ks:
            continue
        width = 0.8 / len(ks)
        start = x
        for j, k in enumerate(ks):
            xc = start + j * width
            ours, _, peer = k.rpartition("/")  # "<another of ours>/<peer>": that one's ratio
            name = "best peer" if k == "best" else C.LABELS[peer] + (f" ({C.LABELS[ours]})" if ours else "")
            ax.bar(xc, r[k], width, color=colors[k], label=None if k in seen else name)
            seen.add(k)
            for g in case.goals:
                if (g.peer if g.ours == "ours" else f"{g.ours}/{g.peer}") == k:
                    ax.hlines(g.max_ratio, xc - width / 2, xc + width / 2, colors="red", linewidth=3,
                              label=None if "goal" in seen else "goal (ratio must be below)")
                    seen.add("goal")
        ticks.append(start + (len(ks) - 1) * width / 2)
        labels.append(case.key)
        x += 1.0
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
    ax.set_yscale("log")
    ax.set_ylabel("ours / peer time (log; < 1: ours faster)")
    ax.set_xticks(ticks)
    ax.set_xticklabels(labels, rotation=60, ha="right", fontsize=8)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[0])
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="tiny sizes, 1 rep (seconds)")
    mode.add_argument("--full", action="store_true", help="full sizes; write this CPU's section of RESULTS.md and its ratios-<cpu>.png")
    p.add_argument("--cuda", action="store_true", help="also the GPU cases (skipped with the reason if impossible)")
    p.add_argument("--plot", help="PNG path (default: benchmarks/ratios-<cpu kind>.png with --full, else a temp dir)")
    p.add_argument("--results", help="Markdown path for the run (default: benchmarks/RESULTS.md with --full)")
    p.add_argument("--reps", type=int, help="repetitions per impl after warm-up (default 15; --quick 1)")
    p.add_argument("--only", help="comma-separated groups: inverse,group_norm,contrib_group_norm,torch_op_inverse,"
                                   "torch_op_group_norm,dispatch,cuda_inverse,cuda_group_norm")
    p.add_argument("--python-ops", action="store_true", help="also run benchmarks/python_ops.py's script")
    p.add_argument("--threads", type=int, default=C.THREADS,
                   help="threads of every impl (default 2; other counts get their own RESULTS.md section)")
    a = p.parse_args(argv)
    if a.threads != C.THREADS:  # (main called with an argv other than the command line's)
        p.error(f"--threads {a.threads}: the benchmarks were imported with {C.THREADS} threads; give --threads on "
                f"the command line or set {C.THREADS_ENV}")

    reps = a.reps or (1 if a.quick else 15)
    warmup, min_time, settle = (1, 0.0005, 0.01) if a.quick else (2, 0.02, 0.15)
    t_start = time.perf_counter()
    out: list[str] = []

    def emit(line: str = "") -> None:
        print(line, flush=True)
        out.append(line)

    cpu = machine.cpu_info()
    peak = measure_peak()
    env = environment(cpu, peak)
    for k, v in env:
        emit(f"{k}: {v}")
    emit(f"mode: {'quick' if a.quick else 'full'}; median of {reps} rep(s) after {warmup} warm-up run(s), each rep "
         f">= {min_time * 1e3:g} ms of back-to-back runs, reps interleaved across impls, {settle * 1e3:g} ms "
         f"pause before each (lets the last impl's spinning thread pools go idle) and one untimed run after it "
         f"(wakes the cores the pause let sleep: a VM's idle vCPU took up to ~12 ms to come back)")
    emit("spread = slowest / fastest rep of an impl (issue 30's stability goal: <= 1.2)")
    noise_start = machine_noise(reps, min_time, settle)
    emit(f"machine noise: fixed work timed as each rep is ({max(2, reps)} reps, the same pause): "
         f"spread {noise_start} now (the floor under every impl's spread; again at the end)")
    handoff_start = handoff() if C.THREADS > 1 else None
    if handoff_start:
        emit(f"handoff: a value one thread writes reaches another in {handoff_start} now (each parallel step "
             f"pays it; on a VM it follows where the host puts the vCPUs; again at the end)")
    emit("ours = ortcustom op in an ORT session (session.run, numpy in/out); ratio = ours / impl "
         "(< 1: ours faster); 'ours direct' = ortcustom.kernels.* (OpenMP pool, kernels.threads()), shown as ours(ORT) / direct")
    emit()

    all_cases = C.cases(quick=a.quick, cuda=a.cuda)
    if a.only:
        groups = set(a.only.split(","))
        all_cases = [c for c in all_cases if c.group in groups]
    cuda_why = C.cuda_unavailable_reason() if a.cuda else None
    errors: list[str] = []
    results = []
    for case in all_cases:
        if case.group.startswith("cuda") and cuda_why:
            continue
        rows = run_case(case, reps, warmup, min_time, settle, errors)
        results.append((case, rows, ratios(case, rows)))
        print(f"  ... {case.key}: {time.perf_counter() - t_start:.0f} s", file=sys.stderr, flush=True)
    for line in format_table(results):
        emit(line)
    emit(f"machine noise at the end: spread {machine_noise(reps, min_time, settle)} (at the start {noise_start})"
         + (f"; handoff {handoff()} (at the start {handoff_start})" if handoff_start else ""))
    emit()
    if a.cuda and cuda_why:
        emit(f"GPU cases: SKIPPED: {cuda_why}")
        emit()
    elif not a.cuda:
        emit("GPU cases: not run (give --cuda)")
        emit()
    for line in format_peak(results, peak):
        emit(line)
    goal_lines, met, total = format_goals(results, a.quick)
    for line in goal_lines:
        emit(line)
    emit()
    emit(f"wall time {time.perf_counter() - t_start:.0f} s")

    if a.python_ops:
        from . import python_ops

        python_ops.main(0.05 if a.quick else 1.0)

    section = section_name(cpu["kind"], C.THREADS)
    plot_path = a.plot or (os.path.join(HERE, plot_name(section)) if a.full else
                           os.path.join(tempfile.mkdtemp(prefix="ortcustom-bench-"), "ratios.png"))
    title = f"ortcustom: ours / peer ({'quick' if a.quick else 'full'}, {dict(env)['date']})"
    try:
        plot(results, plot_path, title)
        print(f"plot: {plot_path}")
    except ImportError:  # matplotlib is in the bench extra: the tables are the results
        plot_path = None
        print("plot: none (no matplotlib; pip install '.[bench]')")
    results_path = a.results or (os.path.join(HERE, "RESULTS.md") if a.full else None)
    if results_path:
        write_results(results_path, plot_path, out, section)
        print(f"results: {results_path}")
    if errors:
        print("ERRORS:", *errors, sep="\n  ", file=sys.stderr)
        return 1
    return 0


_HEAD = ("# Benchmark results\n\n"
         "One section per CPU kind (and thread count, where not 2): the last full run of the plain runner "
         "(`benchmarks/run.py`) on that kind, pasted as it printed; not edited. A run replaces only its own "
         "section. Regenerate with `python -m benchmarks --full [--threads N]` (from the repository root). A ratio compares impls run in one "
         "process on one machine: compare across sections only through the fractions of the FMA peak.\n")


def _sections(text: str) -> dict[str, str]:
    """The per-CPU sections of a RESULTS.md ({kind: text, from its heading on}), in file order."""
    out: dict[str, str] = {}
    parts = text.split("\n## ")
    for part in parts[1:]:
        kind = part.split("\n", 1)[0].strip()
        out[kind] = "## " + part.rstrip() + "\n"
    return out


def section_name(kind: str, threads: int) -> str:
    """RESULTS.md's section for a run on CPU `kind` with `threads` threads: the kind alone for the
    default 2 threads."""
    return kind if threads == 2 else f"{kind}, {threads} thread{'s' if threads > 1 else ''}"


def plot_name(kind: str) -> str:
    """The PNG of a CPU kind's section: ratios-amd-epyc-zen-4.png."""
    return "ratios-" + "-".join("".join(ch if ch.isalnum() else " " for ch in kind.lower()).split()) + ".png"


def write_results(path: str, plot_path: str | None, lines: list[str], kind: str) -> None:
    """Writes this run as the section `kind` (section_name) in `path`, keeping the other sections."""
    cmd = "python -m benchmarks " + " ".join(sys.argv[1:]) if sys.argv[1:] else "python -m benchmarks"
    rel = os.path.relpath(plot_path, os.path.dirname(os.path.abspath(path))) if plot_path else None
    try:
        with open(path) as f:
            sections = _sections(f.read())
    except FileNotFoundError:
        sections = {}
    sections[kind] = (f"## {kind}\n\nCommand: `{cmd}`\n\n```text\n" + "\n".join(lines).rstrip() + "\n```\n"
                      + (f"\n![ours / peer ratios]({rel})\n" if rel else ""))
    with open(path, "w") as f:
        f.write(_HEAD + "".join("\n" + sec for sec in sections.values()))


if __name__ == "__main__":
    sys.exit(main())
