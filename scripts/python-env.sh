#!/usr/bin/env bash
#
# Prepare narma's Python bindings for the tests:  scripts/python-env.sh <build-dir> [python]
#
# Run with the MPI selected by scripts/ensure-env.sh on PATH (ctest does, as the fixture test
# python.setup). Into that Python (by default the first python3 on PATH: the MPI wheel's venv
# .deps/<mpi>), installs what is missing with pip: NumPy, cffi, pytest, and mpi4py built from
# source with this MPI's mpicc (so its ABI is the one libnarma uses; a binary mpi4py wheel may be
# built against another MPI). An mpi4py already there is kept only if it runs on this same MPI
# library. Then builds the narma package (bindings/python, linked to <build-dir>'s libnarma) with
# pip into <build-dir>/python/site, the directory the tests put on PYTHONPATH.
#
# Exit status: 0 ready; 77 (skip) when NumPy, cffi, pytest or mpi4py cannot be installed (no
# package index reachable): <build-dir>/python/UNAVAILABLE then says why, and the Python tests
# skip with that message; 1 when the narma package itself fails to build (an error, never a skip).
set -uo pipefail

root="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd -- "${1:?usage: python-env.sh <build-dir> [python]}" && pwd)"
py="${2:-$(command -v python3)}"
out="$build/python"
mkdir -p "$out"
rm -f "$out/UNAVAILABLE"

say() { printf 'python-env: %s\n' "$*" >&2; }
unavailable() {
    say "$*"
    printf '%s\n' "$*" >"$out/UNAVAILABLE"
    exit 77
}

mpicc="$(command -v mpicc)" || { say "no mpicc on PATH"; exit 1; }
# The MPI library our mpiexec belongs to, as MPI_Get_library_version names it.
mpi_flavor="${NARMA_MPI_FLAVOR:-}"
say "python $py; MPI compiler $mpicc (${mpi_flavor:-flavor unknown})"

missing=()
for mod in numpy cffi pytest setuptools wheel; do
    "$py" -c "import $mod" 2>/dev/null || missing+=("$mod")
done
if [ "${#missing[@]}" -gt 0 ]; then
    say "installing ${missing[*]}"
    "$py" -m pip install -q "${missing[@]}" ||
        unavailable "pip could not install ${missing[*]} into $py"
fi

# mpi4py must run on the MPI library narma is linked to.
mpi4py_ok() {
    "$py" - "$mpi_flavor" <<'PY' 2>/dev/null
import sys
from mpi4py import MPI
v = MPI.Get_library_version()
want = {"mpich": "MPICH", "openmpi": "Open MPI"}.get(sys.argv[1])
sys.exit(0 if want is None or want in v else 1)
PY
}
if ! mpi4py_ok; then
    # --no-cache-dir: pip's cache keeps the wheel it built, and would hand one built against
    # another MPI (the other venv's) back without compiling.
    say "building mpi4py from source with $mpicc (a few minutes)"
    CC="$mpicc" MPICC="$mpicc" "$py" -m pip install -q --force-reinstall --no-deps --no-cache-dir \
        --no-binary mpi4py mpi4py || unavailable "pip could not build mpi4py with $mpicc"
    mpi4py_ok || { say "mpi4py does not run on this MPI library"; exit 1; }
fi

say "building the narma package against $build"
# From a copy: setuptools builds in the tree it is given, and objects left there by a build
# against another MPI must never be reused.
rm -rf "$out/site" "$out/src"
cp -r "$root/bindings/python" "$out/src"
NARMA_BUILD_DIR="$build" CC="$mpicc" "$py" -m pip install -q --no-deps --no-build-isolation \
    --target "$out/site" "$out/src" || { say "the narma package failed to build"; exit 1; }
PYTHONPATH="$out/site" "$py" -c 'import narma, mpi4py; print("narma", narma.Get_version(), "python package ready; mpi4py", mpi4py.__version__)'
