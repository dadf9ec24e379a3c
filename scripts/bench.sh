#!/usr/bin/env bash
#
# Build narma and run the benchmark suite (tools/narma-bench) on 2 ranks, one per core:
#     ./scripts/bench.sh [--mpi auto|mpich|openmpi|system] [-- <narma-bench arguments, e.g. --quick>]
#
# Uses the same MPI selection and build directory as scripts/test.sh (see scripts/ensure-env.sh).
set -euo pipefail

root="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)"
bench_args=()

while [ $# -gt 0 ]; do
    case "$1" in
    --mpi)
        [ $# -ge 2 ] || { echo "bench.sh: --mpi needs a value" >&2; exit 2; }
        export NARMA_MPI="$2"
        shift
        ;;
    --mpi=*) export NARMA_MPI="${1#--mpi=}" ;;
    --)
        shift
        bench_args=("$@")
        break
        ;;
    -h | --help)
        sed -n '3,4p' "$0" | sed 's/^# \{0,1\}//' >&2
        exit 0
        ;;
    *)
        echo "bench.sh: unknown option '$1' (narma-bench arguments go after --)" >&2
        exit 2
        ;;
    esac
    shift
done

# shellcheck source=/dev/null # (following it makes shellcheck think its final `return` ends us)
. "$root/scripts/ensure-env.sh"

build="$NARMA_BUILD_DIR"
cmake_args=(
    -DCMAKE_BUILD_TYPE=RelWithDebInfo
    -DMPI_C_COMPILER="$(command -v mpicc)"
    -DMPIEXEC_EXECUTABLE="$(command -v mpiexec)"
    -DMPIEXEC_PREFLAGS="${NARMA_MPIEXEC_PREFLAGS// /;}"
)
mkdir -p "$build"
narma_build_tree_check "$build"
cmake -S "$root" -B "$build" "${cmake_args[@]}" >"$build/narma-configure.log" 2>&1 || {
    cat "$build/narma-configure.log" >&2
    echo "bench.sh: CMake configuration failed (log above)" >&2
    exit 1
}
cmake --build "$build" --parallel "$(nproc)"

exe="$build/bench/micro/pingpong"
if [ ! -x "$exe" ]; then
    echo "bench.sh: $exe was not built (is bench/micro/pingpong in bench/micro/CMakeLists.txt?)" >&2
    exit 1
fi

# One rank per core, so that neither rank's polling steals the other's time slice.
# shellcheck disable=SC2086 # the flag strings hold several words on purpose
exec "${NARMA_PYTHON:-python3}" "$root/tools/narma-bench" --build-dir "$build" "${bench_args[@]}"
