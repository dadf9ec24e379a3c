#!/usr/bin/env bash
#
# Prepare narma's Python bindings for the tests:  scripts/python-env.sh <build-dir> [python]
#
# Run with the MPI selected by scripts/ensure-env.sh on PATH and LD_LIBRARY_PATH (ctest does, as the
# fixture test python.setup). Into that Python (by default the first python3 on PATH: the MPI
# wheel's venv .deps/<mpi>), installs what is missing with pip: NumPy, cffi, pytest, and mpi4py
# built from source (so its ABI is the one libnarma uses; a binary mpi4py wheel may be built
# against another MPI). Then builds the narma package (bindings/python, linked to <build-dir>'s
# libnarma) with pip into <build-dir>/python/site, the directory the tests put on PYTHONPATH.
#
# Both are compiled with <build-dir>'s MPI compiler (MPI_C_COMPILER in its CMakeCache.txt), never
# with the mpicc that happens to be first on PATH: a shell without ensure-env.sh finds Debian's
# /usr/bin/mpicc there. An mpi4py already installed is kept when it loads the MPI library
# libnarma loads; otherwise it is rebuilt, but never into a Python that comes with another MPI
# (an MPI wheel's venv whose own mpicc is not the build tree's): the venvs in .deps are shared by
# every build tree and worktree, and an mpi4py rebuilt there for another MPI breaks it for all.
#
# Exit status: 0 ready; 77 (skip) when NumPy, cffi, pytest or mpi4py cannot be installed (no
# package index reachable): <build-dir>/python/UNAVAILABLE then says why, and the Python tests
# skip with that message; 1 when the build tree, the Python or the environment do not fit
# together (the message says how to fix it) or the narma package fails to build (an error,
# never a skip).
set -uo pipefail

root="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd -- "${1:?usage: python-env.sh <build-dir> [python]}" && pwd)"
py="${2:-$(command -v python3)}"
out="$build/python"
mkdir -p "$out"
rm -f "$out/UNAVAILABLE"

say() { printf 'python-env: %s\n' "$*" >&2; }
fail() {
    say "$@"
    exit 1
}
unavailable() {
    say "$*"
    printf '%s\n' "$*" >"$out/UNAVAILABLE"
    exit 77
}
# A path with its directories' symlinks resolved and its own name kept (Open MPI's wrappers act
# on the name they are called by, so the file itself is not resolved).
physical() { printf '%s/%s\n' "$(cd -- "$(dirname -- "$1")" && pwd -P)" "$(basename -- "$1")"; }

# The build tree's MPI compiler. Its directory is resolved: the wheels' wrappers put the
# directory they run from into the RUNPATH of what they link, and a path through a worktree's
# .deps link would dangle once the worktree is gone.
cache="$build/CMakeCache.txt"
[ -f "$cache" ] || fail "$build is not a configured build tree (no CMakeCache.txt)"
mpicc="$(sed -n 's/^MPI_C_COMPILER:[A-Z]*=//p' "$cache" | head -n 1)"
case "$mpicc" in
"" | *-NOTFOUND)
    fail "$build has no MPI_C_COMPILER in CMakeCache.txt: configure it with" \
        "-DMPI_C_COMPILER=<the MPI's mpicc> (scripts/test.sh does)"
    ;;
/*) ;;
*) mpicc="$(command -v -- "$mpicc")" || fail "$build's MPI compiler is not on PATH" ;;
esac
[ -x "$mpicc" ] || fail "$build's MPI compiler $mpicc does not exist (any more)"
mpicc="$(physical "$mpicc")"
if path_mpicc="$(command -v mpicc)" && [ "$(physical "$path_mpicc")" != "$mpicc" ]; then
    say "the mpicc on PATH ($path_mpicc) is not $build's MPI compiler; $mpicc builds everything"
fi
libnarma="$build/src/libnarma.so"
[ -e "$libnarma" ] || fail "$libnarma is not built (build $build first)"
say "python $py; MPI compiler $mpicc"

# A venv that comes with an MPI (the wheel venvs: bin/mpicc beside bin/python) serves that MPI
# only (the compilers compared as files: /usr/bin/mpicc is a link to mpicc.mpich).
py_venv="$("$py" -c 'import sys; print(sys.prefix if sys.prefix != sys.base_prefix else "")')" ||
    fail "$py does not run"
if [ -n "$py_venv" ] && [ -x "$py_venv/bin/mpicc" ] &&
    [ "$(readlink -f "$py_venv/bin/mpicc")" != "$(readlink -f "$mpicc")" ]; then
    fail "$py belongs to the MPI of $py_venv/bin/mpicc, but $build is configured with" \
        "$mpicc: its mpi4py serves the other MPI and will not be rebuilt for this one." \
        "Configure $build with -DNARMA_PYTHON=<a Python of its own> (a venv without an MPI)," \
        "or with that MPI's compiler (-DMPI_C_COMPILER=$py_venv/bin/mpicc)."
fi

# One python-env.sh at a time per Python (build trees and worktrees share the .deps venvs): a
# second one would see the first one's mpi4py half reinstalled and reinstall it again.
lock="${py_venv:-$out}/.narma-python-env.lock"
[ -w "$(dirname -- "$lock")" ] || lock="$out/.narma-python-env.lock"
exec 9>"$lock"
if ! flock -n 9; then
    say "waiting for another python-env.sh preparing $py ($lock)"
    flock -w 1200 9 || fail "another python-env.sh has held $lock for 20 minutes"
fi

missing=()
for mod in numpy cffi pytest setuptools wheel; do
    "$py" -c "import $mod" 2>/dev/null || missing+=("$mod")
done
if [ "${#missing[@]}" -gt 0 ]; then
    say "installing ${missing[*]}"
    "$py" -m pip install -q "${missing[@]}" ||
        unavailable "pip could not install ${missing[*]} into $py"
fi

# The MPI library libnarma loads here (resolved), and the one mpi4py loads.
narma_mpi=""
while read -r name _ path _; do
    case "$name" in libmpi*) ;; *) continue ;; esac
    [ -e "$path" ] || fail "$libnarma does not find $name here: source scripts/ensure-env.sh first"
    narma_mpi="${narma_mpi:+$narma_mpi }$(readlink -f "$path")"
done < <(ldd "$libnarma")
case "$narma_mpi" in
"" | *" "*) fail "cannot tell which MPI library $libnarma loads (ldd: '$narma_mpi')" ;;
esac
# Prints mpi4py's MPI library; exit 4: no mpi4py; 3: mpi4py cannot load an MPI library; 2: it
# fails otherwise.
mpi4py_mpi() {
    "$py" - <<'PY'
import os
import sys
try:
    import mpi4py  # noqa: F401
except ImportError:
    sys.exit(4)
try:
    from mpi4py import MPI  # noqa: F401
except ImportError as e:
    print(e)
    sys.exit(3 if "cannot open shared object file" in str(e) else 2)
libs = set()
with open("/proc/self/maps") as f:
    for line in f:
        fields = line.split(None, 5)
        if len(fields) == 6 and os.path.basename(fields[5].strip()).startswith("libmpi"):
            libs.add(os.path.realpath(fields[5].strip()))
print(" ".join(sorted(libs)))
PY
}

build_mpi4py() {
    # --no-cache-dir: pip's cache keeps the wheel it built, and would hand one built against
    # another MPI (the other venv's) back without compiling.
    say "building mpi4py from source with $mpicc (a few minutes)"
    CC="$mpicc" MPICC="$mpicc" "$py" -m pip install -q --force-reinstall --no-deps --no-cache-dir \
        --no-binary mpi4py mpi4py || unavailable "pip could not build mpi4py with $mpicc"
}

found="$(mpi4py_mpi)"
case $? in
0)
    if [ "$found" != "$narma_mpi" ]; then
        say "mpi4py in $py loads ${found:-no MPI library}, libnarma $narma_mpi: rebuilding it"
        build_mpi4py
    fi
    ;;
4) build_mpi4py ;;
3)
    fail "mpi4py in $py cannot load its MPI library ($found). Source scripts/ensure-env.sh" \
        "first (it puts the MPI's lib directory on LD_LIBRARY_PATH); if the MPI mpi4py was" \
        "built with is gone, remove it ($py -m pip uninstall mpi4py) and run again"
    ;;
*)
    say "mpi4py in $py fails to load ($found): rebuilding it"
    build_mpi4py
    ;;
esac
found="$(mpi4py_mpi)" || fail "mpi4py does not load after its build: $found"
[ "$found" = "$narma_mpi" ] || fail "mpi4py loads $found, libnarma $narma_mpi"

say "building the narma package against $build"
# From a copy: setuptools builds in the tree it is given, and objects left there by a build
# against another MPI must never be reused.
rm -rf "$out/site" "$out/src"
cp -r "$root/bindings/python" "$out/src"
NARMA_BUILD_DIR="$build" CC="$mpicc" "$py" -m pip install -q --no-deps --no-build-isolation \
    --target "$out/site" "$out/src" || { say "the narma package failed to build"; exit 1; }
PYTHONPATH="$out/site" "$py" -c 'import narma, mpi4py; print("narma", narma.Get_version(), "python package ready; mpi4py", mpi4py.__version__)'
