"""Every ```python block of README.md runs on its own: each in a fresh namespace (a reader may paste
any one of them alone), in a temporary folder. Blocks that use torch are skipped only where torch
is missing."""
import importlib.util
import pathlib
import re

import pytest

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"
FENCE = re.compile(r"^```python\n(.*?)^```$", re.S | re.M)


def python_blocks(text: str) -> list[tuple[int, str]]:
    """(first line number, code) of each ```python block."""
    return [(text.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in FENCE.finditer(text)]


def test_blocks_are_found():
    blocks = python_blocks(README.read_text())
    assert len(blocks) >= 3
    assert python_blocks("a\n```python\nx = 1\n```\n```bash\nls\n```\n") == [(3, "x = 1\n")]


def test_readme_python_blocks_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # what the examples write (model.onnx) lands here
    has_torch = importlib.util.find_spec("torch") is not None
    skipped = []
    for line, code in python_blocks(README.read_text()):
        if not has_torch and re.search(r"\btorch\b", code):
            skipped.append(line)
            continue
        # padded so that a traceback points at README.md's own line numbers
        exec(compile("\n" * (line - 1) + code, str(README), "exec"), {"__name__": "__readme__"})
    if skipped:
        pytest.skip(f"torch is not installed: skipped the blocks at README.md lines {skipped}")
