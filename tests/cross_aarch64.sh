#!/usr/bin/env bash
# The CPU kernels build where the machine is not x86: compiles kernels/ (the static library
# kernels/meson.build makes, with the project's own flags) and the plain custom-op libraries (with
# the glue) with Debian's aarch64 cross compiler, links the kernels into a shared object with no
# undefined symbols left but libc's and libstdc++'s, and checks that it is aarch64 code without the
# x86 AVX2 and AVX-512 passes (CI runs it).
#
#   tests/cross_aarch64.sh   # needs g++-aarch64-linux-gnu (Debian: apt-get install g++-aarch64-linux-gnu),
#                            # and meson, ninja, cython, numpy for PYTHON (default python3)
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CROSS=${CROSS:-aarch64-linux-gnu}
command -v "$CROSS-g++" > /dev/null || { echo "cross_aarch64: $CROSS-g++ not found" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/ortcustom-cross.XXXXXX")
trap 'rm -rf "$work"' EXIT

cat > "$work/cross.ini" <<EOF
[binaries]
c = '$CROSS-gcc'
cpp = '$CROSS-g++'
ar = '$CROSS-ar'
strip = '$CROSS-strip'
pkg-config = 'pkg-config'

[host_machine]
system = 'linux'
cpu_family = 'aarch64'
cpu = 'armv8-a'
endian = 'little'

[properties]
# the Cython check compiles against Python's headers for aarch64, which are not here (and not needed:
# only kernels/ is built)
skip_sanity_check = true
EOF

# The whole project configures (Python, Cython and NumPy's headers are the build machine's; only
# kernels/ is built). Needs meson, ninja, cython and numpy where PYTHON runs.
numpy_pc=$("${PYTHON:-python3}" -c "import numpy, os; print(os.path.join(os.path.dirname(numpy.__file__), '_core', 'lib', 'pkgconfig'))")
meson setup "$work/build" "$REPO" --cross-file "$work/cross.ini" -Dcuda=disabled \
  -Dpkg_config_path="$numpy_pc" -Dwerror=true -Dwarning_level=2 > "$work/setup.log" \
  || { cat "$work/setup.log"; exit 1; }
ninja -C "$work/build" kernels/libortcustom_cpu_kernels.a kernels/_kernels.so kernels/_contrib.so
lib="$work/build/kernels/libortcustom_cpu_kernels.a"
# the plain custom-op libraries (kernels + glue + generated table): aarch64, nothing of Python
for plain in "$work/build/kernels/_kernels.so" "$work/build/kernels/_contrib.so"; do
  [[ $("$CROSS-readelf" -h "$plain" | sed -n 's/^ *Machine: *//p') == AArch64 ]] \
    || { echo "cross_aarch64: $plain is not AArch64" >&2; exit 1; }
  # whole outputs first: `grep -q` on a pipe may SIGPIPE nm, a failure under pipefail
  defined=$("$CROSS-nm" -D --defined-only "$plain")
  undefined=$("$CROSS-nm" -D --undefined-only "$plain")
  grep -q " T RegisterCustomOps$" <<< "$defined" \
    || { echo "cross_aarch64: $plain exports no RegisterCustomOps" >&2; exit 1; }
  if grep -q " U _\?Py" <<< "$undefined"; then
    echo "cross_aarch64: $plain needs Python" >&2; exit 1
  fi
done

"$CROSS-g++" -shared -Wl,--no-undefined -Wl,--whole-archive "$lib" -Wl,--no-whole-archive -o "$work/k.so"
machine=$("$CROSS-readelf" -h "$work/k.so" | sed -n 's/^ *Machine: *//p')
[[ $machine == AArch64 ]] || { echo "cross_aarch64: built for '$machine', not AArch64" >&2; exit 1; }
"$CROSS-nm" -C "$lib" > "$work/symbols.txt"
if grep -qiE 'avx2|avx512' "$work/symbols.txt"; then
  echo "cross_aarch64: an x86 pass (AVX2, AVX-512) was compiled for aarch64" >&2; exit 1
fi
for f in oc_inverse_f32 oc_inverse_f16 oc_group_norm_f64 oc_cpu_isa ortcustom_kernel_inverse_cpu \
         ortcustom_kernel_group_norm_cpu; do
  grep -q " T $f\$" "$work/symbols.txt" || { echo "cross_aarch64: $f missing" >&2; exit 1; }
done
echo "cross_aarch64: kernels/cpu and the plain libraries build and link for aarch64 ($("$CROSS-g++" -dumpversion)), baseline pass only"
