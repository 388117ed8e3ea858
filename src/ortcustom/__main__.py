"""`python -m ortcustom COMMAND`: the command line (`python -m ortcustom --help` lists the commands)."""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

ENTRY_POINTS = "ortcustom.domains"
"""The entry point group through which an installed op package names its domains for `info`: in its
pyproject.toml, `[project.entry-points."ortcustom.domains"] myops = "myops:domain"` (MODULE:ATTR, a
Domain, a list of them, or a function returning either, as library-source takes them)."""


def info() -> int:
    import onnxruntime as ort

    import ortcustom
    from ortcustom.native import builtin_info
    from ortcustom._ort_install import onnxruntime_site, owners

    b = ortcustom.build_info()
    print(f"ortcustom {b['version']}")
    site = onnxruntime_site()
    dists = ", ".join(f"{d.metadata['Name']} {d.version}" for d in (owners(site) if site else [])) or "no .dist-info"
    print(f"  onnxruntime found: {ort.__version__} ({ort.__file__.rsplit('/', 2)[0]}; installed by {dists})")
    print(f"  providers available: {', '.join(ort.get_available_providers())}")
    print(f"  ORT API version declared: {b['ort_api_version']}; minimum onnxruntime: {b['min_ort_version']}")
    print(f"  CPU kernels run with: {builtin_info('cpu_isa')}")
    print(f"  CUDA kernels built: {'yes, for sm ' + ', '.join(b['cuda_archs']) if b['cuda'] else 'no'}")
    if b["cuda"]:
        n = builtin_info("cuda_device_count")
        print(f"  CUDA GPUs usable now: {n}" + ("" if n else " (no GPU or no driver: the CPU kernels run)"))
    print(f"  plain custom-op library (ORT without Python): {ortcustom.get_library_path()}")
    print(f"  domains and their ops (ortcustom's, then installed op packages' from the entry points "
          f"{ENTRY_POINTS!r}):")
    for source, ref in _domain_sources():
        print(f"    {source} ({ref}):")
        try:
            from ortcustom.library_source import load_domains

            domains = load_domains([ref])
        except Exception as e:  # noqa: BLE001 - a broken package is reported, the others still listed
            from ortcustom.library_source import error_line

            print(f"      cannot load it: {error_line(e)}")
            continue
        for d in domains:
            print(f"      domain {d.name!r} (version {d.version}):")
            for op in d.ops:
                for line in describe(op):
                    print(f"        {line}")
    return 0


def _domain_sources():
    """(who, MODULE:ATTR) of each set of domains to list: ortcustom's two plain libraries', then
    each installed package's entry point in ENTRY_POINTS."""
    from importlib.metadata import entry_points

    yield "ortcustom", "ortcustom.ops:library_domains"
    yield "ortcustom, ORT's contrib ops for a CPU host", "ortcustom.ops.contrib:library_domains"
    for ep in sorted(entry_points(group=ENTRY_POINTS), key=lambda ep: ep.name):
        yield f"package {ep.dist.name if ep.dist else ep.name}", ep.value


def _value(v) -> str:
    """An attribute value as written in a declaration (floats to float32's precision, as stored)."""
    if isinstance(v, float):
        return f"{v:.7g}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(map(_value, v)) + "]"
    return repr(v)


def describe(op) -> list[str]:
    """An op's declaration as `info` shows it: versions, signature with types, attributes, kernel."""
    def io(x):
        return f"{x.name}{'?' if x.optional else ''}{'...' if x.variadic else ''}: {x.type}"

    versions = f"opset {op.since}+" if op.until is None else f"opsets {op.since}-{op.until}"
    types = "; ".join(f"{k} in {{{', '.join(v)}}}" for k, v in op.types.items())
    lines = [f"{op.name} [{versions}] ({', '.join(map(io, op.inputs))}) -> ({', '.join(map(io, op.outputs))})"
             + (f" with {types}" if types else "")]
    for a in op.attrs:
        rules = [f">= {a.min:g}" if a.min is not None else "", f"<= {a.max:g}" if a.max is not None else "",
                 f"one of {list(a.choices)}" if a.choices is not None else "", "checked" if a.check else ""]
        default = "required" if a.required else f"default {_value(a.default)}"
        lines.append(f"  attribute {a.name}: {a.kind}, {default}" + "".join(f", {r}" for r in rules if r))
    kernel = f"native {op.native}" if isinstance(op.native, str) else (
        f"native {op.native!r}" if op.native is not None else "Python" + (" (CPU, CUDA)" if op.cuda else ""))
    lines.append(f"  kernel: {kernel}")
    return lines


def _step(i: int, n: int, text: str) -> None:
    print(f"[{i}/{n}] {text}", flush=True)


def _median_ms(sess, feed, seconds=0.5, max_runs=2000) -> float:
    sess.run(None, feed)  # warm-up
    times = []
    end = time.perf_counter() + seconds
    while len(times) < max_runs and (len(times) < 10 or time.perf_counter() < end):
        t = time.perf_counter()
        sess.run(None, feed)
        times.append(time.perf_counter() - t)
    return 1e3 * float(np.median(times))


def _handmade_model():
    """What both exporters make of `torch.inverse(x) + x`: com.microsoft::Inverse, then Add."""
    from onnx import TensorProto, helper

    from ortcustom.testing import for_runtime

    graph = helper.make_graph(
        [helper.make_node("Inverse", ["x"], ["inv"], domain="com.microsoft"),
         helper.make_node("Add", ["inv", "x"], ["y"])],
        "inverse_plus_x",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "n", "n"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "n", "n"])])
    return for_runtime(helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]))


def _export_quietly(model, x, dynamo: bool):
    import logging
    import warnings

    import ortcustom.export

    # the exporters' chatter about what this model does not use (torchvision ops, deprecations)
    log = logging.getLogger("torch.onnx")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ortcustom.export.export(model, (x,), dynamo=dynamo)
    finally:
        log.setLevel(level)


def _nodes(model) -> str:
    return ", ".join(f"{n.domain + '::' if n.domain else ''}{n.op_type}" for n in model.graph.node)


def demo() -> int:
    """The main job: a PyTorch model with torch.inverse (ONNX has no inverse) exported with both
    exporters, run by ORT with ortcustom's Inverse, checked against PyTorch and timed against ORT's
    built-in com.microsoft Inverse. Without PyTorch: the same ONNX model, made with onnx.helper."""
    import onnxruntime as ort

    import ortcustom

    try:
        import torch
    except ImportError:
        torch = None
    cpu = ["CPUExecutionProvider"]
    batch, n = 64, 16
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((batch, n, n)) + n * np.eye(n)).astype(np.float32)
    steps = 5 if torch is not None else 3
    print(f"ortcustom {ortcustom.__version__} demo on onnxruntime {ort.__version__} (CPU), "
          f"x: {batch} matrices {n}x{n} float32", flush=True)

    if torch is not None:
        import ortcustom.export

        class InversePlusX(torch.nn.Module):
            def forward(self, x):
                return torch.inverse(x) + x

        model = InversePlusX().eval()
        with torch.no_grad():
            expected = model(torch.from_numpy(x)).numpy()
        _step(1, steps, f"PyTorch {torch.__version__}: y = torch.inverse(x) + x")
        models = {}
        for i, (dynamo, name) in enumerate([(False, "TorchScript"), (True, "dynamo")], start=2):
            t = time.perf_counter()
            models[name] = _export_quietly(model, torch.from_numpy(x), dynamo)
            _step(i, steps, f"exported with the {name} exporter (dynamo={dynamo}) in "
                            f"{time.perf_counter() - t:.1f} s: {_nodes(models[name])}")
        reference = "PyTorch"
    else:
        expected = np.linalg.inv(x) + x
        models = {"onnx.helper": _handmade_model()}
        _step(1, steps, f"no PyTorch here (to export from it: {ortcustom._INSTALL_TORCH}): the ONNX "
                        f"model both exporters make, built with onnx.helper: {_nodes(models['onnx.helper'])}")
        reference = "NumPy"

    errors = []
    for name, m in models.items():
        so = ortcustom.session_options(*_domains(m))
        sess = ort.InferenceSession(m.SerializeToString(), so, providers=cpu)
        (y,) = sess.run(None, {sess.get_inputs()[0].name: x})
        errors.append((name, float(np.abs(y - expected).max())))
    _step(steps - 1, steps, f"ran in ORT with ortcustom's Inverse: max |ORT - {reference}| = "
                            + ", ".join(f"{e:.1e} ({name} model)" for name, e in errors))

    # the same model twice: with ortcustom's Inverse registered, and as ORT itself runs it
    m = models["dynamo" if "dynamo" in models else "onnx.helper"]
    ours = ort.InferenceSession(m.SerializeToString(), ortcustom.session_options(*_domains(m)), providers=cpu)
    builtin = ort.InferenceSession(m.SerializeToString(), providers=cpu)
    feed = {ours.get_inputs()[0].name: x}
    t_ours, t_builtin = _median_ms(ours, feed), _median_ms(builtin, feed)
    _step(steps, steps, f"timed, median run: with ortcustom {t_ours:.3f} ms, with ORT's built-in "
                        f"com.microsoft Inverse {t_builtin:.3f} ms (ortcustom: {t_ours / t_builtin:.2f}x its time)")
    ok = all(e < 1e-4 for _, e in errors)
    print("OK" if ok else "MISMATCH", flush=True)
    return 0 if ok else 1


def _domains(model):
    """The domains to register for `model`: what the exporter recorded, else com.microsoft's Inverse."""
    import ortcustom
    from ortcustom.ops import Inverse

    try:
        import ortcustom.export

        return ortcustom.export.domains(model)
    except ImportError:  # no torch: ortcustom.export is unavailable
        return [ortcustom.Domain("com.microsoft").add(Inverse)]


def new(name: str, directory: str) -> int:
    from .scaffold import build_steps, new as write

    try:
        dest = write(name, directory)
    except (ValueError, FileExistsError) as e:
        print(f"python -m ortcustom new: {e}", file=sys.stderr)
        return 2
    print(f"wrote {dest}: a meson-python package with one op (ScaledAdd: C++ and CUDA kernels).")
    print(f"Build and test it (its README.md says more):\n  cd {dest}")
    for line in build_steps(dest):
        print(f"  {line}")
    return 0


def config(what: str) -> int:
    """Prints where the kernel headers (and the pkg-config file) of this ortcustom are."""
    import os

    import ortcustom

    inc = ortcustom.get_include()
    if what == "includedir":
        print(inc)
    elif what == "gluedir":
        print(os.path.join(os.path.dirname(ortcustom.__file__), "glue"))
    elif what == "cflags":
        print(f"-I{inc}")
    else:
        pc = os.path.join(os.path.dirname(ortcustom.__file__), "lib", "pkgconfig")
        if not os.path.exists(os.path.join(pc, "ortcustom.pc")):
            print("python -m ortcustom config: no ortcustom.pc here (an editable install has none); use "
                  "--includedir", file=sys.stderr)
            return 1
        print(pc)
    return 0


def library(ref) -> int:
    import ortcustom
    from ortcustom.library_source import error_line, load_domains

    if ref is None:
        print(ortcustom.get_library_path())
        return 0
    try:
        paths = [ortcustom.get_library_path(d) for d in load_domains([ref])]
    except Exception as e:  # noqa: BLE001 - one line, not a traceback
        print(f"python -m ortcustom library: {ref}: {error_line(e)}", file=sys.stderr)
        return 1
    for path in dict.fromkeys(paths):
        print(path)
    return 0


class _Version(argparse.Action):
    """--version: read only when asked (a source tree, as a build runs it, has no version yet)."""

    def __init__(self, option_strings, dest, **kw):
        super().__init__(option_strings, dest, nargs=0, help="print ortcustom's version and exit")

    def __call__(self, parser, namespace, values, option_string=None):
        import ortcustom

        print(f"ortcustom {ortcustom.__version__}")
        parser.exit()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ortcustom",
                                     description="ortcustom: custom operators for ONNX Runtime, declared in Python.")
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    sub.add_parser("info", help="what was built and found (onnxruntime, providers, CPU and CUDA kernels), and the "
                                "domains, ops, versions, types and attributes of ortcustom and of installed op "
                                f"packages (entry points {ENTRY_POINTS!r})")
    sub.add_parser("demo", help="torch.inverse exported (both exporters), run by ORT with our Inverse, checked "
                                "against PyTorch, timed")
    p = sub.add_parser("new", help="write a meson-python package of your own native ops (one example op, ScaledAdd)")
    p.add_argument("name", help="the package's (and its Python module's) name, e.g. myops")
    p.add_argument("--dir", default=".", help="where to write it (default: here)")
    p = sub.add_parser("config", help="where the kernel headers, the glue's sources (for a package's plain "
                                      "library) and the pkg-config file are")
    g = p.add_mutually_exclusive_group(required=True)
    for flag in ("cflags", "includedir", "gluedir", "pkgconfigdir"):
        g.add_argument(f"--{flag}", dest="what", action="store_const", const=flag)
    p = sub.add_parser("library", help="the path of a plain custom-op library (no Python): for C/C++, C#, Java, "
                                        "a Dockerfile or Triton's op_library_filename")
    p.add_argument("ref", nargs="?", help="MODULE[:DOMAIN] (DOMAIN: the name of a Domain in MODULE, default "
                                          "`domain`); none: ortcustom's own library")
    sub.add_parser("library-source", add_help=False,
                   help="(a package's build) the C++ table of a plain library, from declarations")
    sub.add_parser("library-check", add_help=False,
                   help="(a package's build) the built library's kernels against the declarations")
    args, rest = parser.parse_known_args(argv)
    if args.command in ("library-source", "library-check"):
        from . import library_source

        return (library_source.main if args.command == "library-source" else library_source.check_main)(rest)
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    if args.command == "library":
        return library(args.ref)
    if args.command == "new":
        return new(args.name, args.dir)
    if args.command == "config":
        return config(args.what)
    return {"info": info, "demo": demo}[args.command]()


if __name__ == "__main__":
    sys.exit(main())
