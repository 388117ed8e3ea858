#!/usr/bin/env bash
# Runs the test suite against given onnxruntime versions, each in a fresh virtual environment.
#
#   tests/ort_versions.sh                 # the oldest supported (1.17.0) and the newest on the index
#   tests/ort_versions.sh 1.17.0 1.20.1   # these versions
#   tests/ort_versions.sh 1.17.0 -- -x tests/test_inverse.py   # extra pytest arguments after --
#
# For each version: a venv in a temporary directory; the CPU wheel `onnxruntime==X` and the test
# extras; then ortcustom as README.md says to install it next to an ONNX Runtime one has
# (`pip install --no-deps`; a regular, non-editable build, as users get it, or the wheel WHEEL);
# then pytest from the repo root (the package lives in src/, so the installed copy is tested).
# Exits non-zero if any version fails.
#
# Compatibility notes (found by running it):
#   * onnxruntime < 1.19 wheels are built against NumPy 1.x and fail to import under NumPy 2
#     ("A module that was compiled using NumPy 1.x cannot be run in NumPy 2"): numpy<2 is pinned
#     for them. ortcustom itself is built against NumPy 2, whose ABI also runs on NumPy 1.x.
#   * onnx 1.23 writes IR version 14; ortcustom.testing.for_runtime lowers models to what the
#     runtime reads (ORT 1.17: IR 9), so no older onnx is needed. Set ONNX_SPEC (e.g.
#     ONNX_SPEC='onnx<1.17') to try another onnx.
#   * Environment: PYTHON (default python3), TORCH_SPEC (default torch==2.13.0), KEEP=1 keeps the venvs,
#     WHEEL (an ortcustom wheel to install instead of building one per version), BUILD_ARGS (e.g.
#     -Csetup-args=-Dcuda=disabled) for the package's build otherwise.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PYTHON=${PYTHON:-python3}
TORCH_SPEC=${TORCH_SPEC:-torch==2.13.0}
OLDEST=1.17.0

versions=()
while [[ $# -gt 0 && $1 != "--" ]]; do versions+=("$1"); shift; done
[[ ${1:-} == "--" ]] && shift
pytest_args=("$@")
if [[ ${#versions[@]} -eq 0 ]]; then
  newest=$("$PYTHON" -m pip index versions onnxruntime 2>/dev/null | sed -n 's/^onnxruntime (\(.*\))$/\1/p')
  versions=("$OLDEST" ${newest:+"$newest"})
fi

# "1.18.1" -> 1; "1.19.0" -> 0: does this onnxruntime need NumPy 1.x?
needs_numpy1() { "$PYTHON" -c "import sys; v=tuple(map(int,'$1'.split('.')[:2])); sys.exit(0 if v < (1, 19) else 1)"; }

failed=()
for v in "${versions[@]}"; do
  work=$(mktemp -d "${TMPDIR:-/tmp}/ortcustom-ort-$v.XXXXXX")
  [[ ${KEEP:-0} == 1 ]] || trap 'rm -rf "$work"' EXIT
  echo "=== onnxruntime $v (venv: $work/venv) ==="
  "$PYTHON" -m venv "$work/venv"
  py="$work/venv/bin/python"
  pip=("$py" -m pip install --quiet --disable-pip-version-check)
  : > "$work/constraints.txt"
  if needs_numpy1 "$v"; then echo "numpy<2" >> "$work/constraints.txt"; fi
  [[ -n ${ONNX_SPEC:-} ]] && echo "$ONNX_SPEC" >> "$work/constraints.txt"
  "${pip[@]}" -c "$work/constraints.txt" "onnxruntime==$v" "onnx>=1.16" "pytest>=7" "hypothesis>=6" \
    "$TORCH_SPEC" "onnxscript>=0.3" "expecttest>=0.1"  # as the test extra (pyproject.toml)
  # the wheel given, or built here in isolation against NumPy 2 (no constraints: they would reach
  # the build env)
  # shellcheck disable=SC2206  # BUILD_ARGS: words
  if [[ -n ${WHEEL:-} ]]; then target=("$WHEEL"); else target=(${BUILD_ARGS:-} "$REPO"); fi
  "${pip[@]}" --no-deps "${target[@]}"
  (cd "$work" && "$py" -c "import onnxruntime, numpy, onnx, ortcustom; print('onnxruntime', \
onnxruntime.__version__, 'numpy', numpy.__version__, 'onnx', onnx.__version__, 'ortcustom', ortcustom.__version__)")
  if (cd "$REPO" && "$py" -m pytest -q -p no:cacheprovider "${pytest_args[@]}"); then
    echo "=== onnxruntime $v: passed ==="
  else
    echo "=== onnxruntime $v: FAILED ==="
    failed+=("$v")
  fi
  [[ ${KEEP:-0} == 1 ]] || { rm -rf "$work"; trap - EXIT; }
done

if [[ ${#failed[@]} -gt 0 ]]; then
  echo "failed with onnxruntime: ${failed[*]}"
  exit 1
fi
echo "passed with onnxruntime: ${versions[*]}"
