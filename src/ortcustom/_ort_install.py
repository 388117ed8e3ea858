"""The import-time check that exactly one ONNX Runtime distribution owns the `onnxruntime/` folder.

ORT ships as many distributions (onnxruntime, onnxruntime-gpu, -directml, -openvino, ...) that all
install the same `onnxruntime/` package. pip installs a second one over the first without a word:
their files then mix (`pip list` and `onnxruntime.__version__` disagree), and uninstalling either
deletes files the other needs. Read from the installed metadata (importlib.metadata), without
importing onnxruntime, in about a millisecond.
"""
from __future__ import annotations

import importlib.metadata
import importlib.util
import os
from pathlib import Path

# Every ORT distribution's name starts so (normalized, as in the .dist-info folder name); which of
# them own `onnxruntime/` is read from their RECORD (onnxruntime-extensions, -genai do not).
_NAME_PREFIXES = ("onnxruntime", "ort_nightly")
_INIT = "onnxruntime/__init__.py"


class OnnxRuntimeInstallError(ImportError):
    """ONNX Runtime's installation is broken in a way that makes it load the wrong files."""


def owners(site: Path) -> list[importlib.metadata.Distribution]:
    """The distributions installed in the folder `site` whose files include onnxruntime/__init__.py."""
    found = []
    try:
        entries = sorted(os.scandir(site), key=lambda e: e.name)
    except OSError:
        return found
    for entry in entries:
        if not entry.name.endswith(".dist-info") or not entry.name.lower().startswith(_NAME_PREFIXES):
            continue
        dist = importlib.metadata.PathDistribution(Path(entry.path))
        record = dist.read_text("RECORD") or ""
        if any(line.split(",", 1)[0] == _INIT for line in record.splitlines()):
            found.append(dist)
    return found


def onnxruntime_site() -> Path | None:
    """The folder holding the `onnxruntime` package that `import onnxruntime` would load."""
    try:
        spec = importlib.util.find_spec("onnxruntime")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0]).parent


def _describe(dists) -> str:
    return " and ".join(f"{d.metadata['Name']} {d.version}" for d in dists)


def problem(site: Path | None) -> str | None:
    """What is wrong with the ONNX Runtime installed in `site` (None: nothing, or none installed)."""
    if site is None:
        return None
    found = owners(site)
    folder = site / "onnxruntime"
    if len(found) > 1:
        names = [d.metadata["Name"] for d in found]
        return (
            f"ONNX Runtime is installed {len(found)} times into the same folder {folder}, by "
            f"{_describe(found)}: each overwrote the other's files, so `import onnxruntime` loads a mix "
            "of them. Keep one: uninstall all of them, then install the one you want (uninstalling only "
            "one deletes files the other needs):\n"
            f"    pip uninstall -y {' '.join(names)}\n"
            f"    pip install {names[0]}   # or: {', '.join(names[1:])}\n"
            "ortcustom works with any of them. To install ortcustom next to an ONNX Runtime you already "
            "have, without pulling in another one, give pip --no-deps (README.md, Install).")
    if len(found) == 1 and not (folder / "__init__.py").exists():
        d = found[0]
        return (
            f"ONNX Runtime's files in {folder} are missing, though {_describe(found)} is installed there "
            "(uninstalling another ONNX Runtime distribution that shared the folder deletes them). "
            f"Reinstall it:\n    pip install --force-reinstall --no-deps {d.metadata['Name']}=={d.version}")
    return None


def check_onnxruntime_install() -> None:
    """Raises OnnxRuntimeInstallError when the ONNX Runtime that would be imported is broken."""
    msg = problem(onnxruntime_site())
    if msg:
        raise OnnxRuntimeInstallError(msg)
