#!/usr/bin/env bash
#
# Run test suites that narma's authors did not write against narma:
#   ./scripts/foreign-suites.sh [--transports shm,mpi|ofi] [--only REGEX] [--skip REGEX] [--timeout S]
#                               [--work DIR] [--list] PATH...
#
# Each PATH is a copy you fetched yourself (their code never enters this repository):
#   - foMPI-NA (https://github.com/spcl/foMPI-NA): the repository or its tests/test_foMPI-NA;
#   - MPICH's RMA tests: the MPICH repository, its test/mpi, or test/mpi/rma (with ../include and
#     ../util next to it).
# The script builds narma (with the MPI that NARMA_MPI names, default the MPICH wheel, in
# build-<mpi>/, as scripts/test.sh; foMPI-NA runs on Open MPI too, MPICH's tests need MPICH's int
# handles), then builds every test with that MPI's mpicc and a header of narma's that maps the
# foreign names onto narma's:
#   - foMPI-NA: <narma/fompi.h> (installed), through scripts/foreign/fompi/fompi.h, and a driver
#     (scripts/foreign/fompi/fompi_driver.c) that runs one case per job, as foMPI-NA's main.c sets
#     it up, at 4 ranks on communicator MPI_COMM_WORLD;
#   - MPICH: scripts/foreign/mpich/mpi_to_narma.h, forced in with -include; every test of
#     test/mpi/rma/testlist.in at the rank count and arguments the list gives. A test passes
#     when it exits 0 and prints "No Errors" (foMPI-NA: exits 0, prints "No Error", no error line).
# Every run is repeated per transport (NARMA_TRANSPORT=shm and =mpi; --transports ofi builds the
# experimental ofi transport into build-<mpi>-ofi/ and runs it at NARMA_NODE_SIZE=1 unless set,
# with NARMA_VERBOSE=1: a run whose window fell back to mpi alone is marked "no-ofi"), niced, one at a time, each
# under a timeout (default 180 s, as MPICH's runtests; the test list's timeLimit when larger;
# 480 s for the tests that time out at 3 oversubscribed ranks with MPICH itself too). Tests that use what narma does not
# offer are listed as excluded with the reason. Prints one line per run, then totals; logs are in
# <build>/foreign/logs/ (--work: another directory, e.g. for a second run at the same time).
# Exit status: 0 when every included run passed.
# docs/conformance.md records the numbers and explains every exclusion and failure.
set -euo pipefail
# The whole script is one compound command: bash reads it completely before running it, so
# editing the file during a long run cannot derail that run.
{

root="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)"
here="$root/scripts/foreign"
transports="shm,mpi"
only=""
skip=""
timeout_default=180 # MPICH runtests' default
list_only=0
work=""
paths=()

usage() {
    sed -n '3,5p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

while [ $# -gt 0 ]; do
    case "$1" in
    --transports) transports="${2:?}"; shift ;;
    --transports=*) transports="${1#*=}" ;;
    --only) only="${2:?}"; shift ;;
    --only=*) only="${1#*=}" ;;
    --skip) skip="${2:?}"; shift ;;
    --skip=*) skip="${1#*=}" ;;
    --timeout) timeout_default="${2:?}"; shift ;;
    --timeout=*) timeout_default="${1#*=}" ;;
    --work) work="${2:?}"; shift ;;
    --work=*) work="${1#*=}" ;;
    --list) list_only=1 ;;
    -h | --help) usage ;;
    -*) echo "foreign-suites.sh: unknown option '$1'" >&2; usage ;;
    *) paths+=("$1") ;;
    esac
    shift
done
[ ${#paths[@]} -gt 0 ] || usage

# ---- What is excluded, and why (docs/conformance.md explains each) ----------------------------
# foMPI-NA cases, by case name.
declare -A fompi_excluded=(
    [excl_lock]="inspects foMPI-NA's internal window structure (win->excl_locks)"
    [null_pointer]="erroneous: passes NULL as Win_allocate's baseptr (narma refuses with NARMA_ERR_ARG)"
    [rget_lockall]="erroneous: rank 0's Rget from itself writes the window location it reads (origin buffer overlaps the target)"
    [fetch_and_op_sum_pscw]="erroneous: rank 0 accesses itself, which is not in its Win_start group"
)
# MPICH tests that the automatic check below cannot see through (by test name).
declare -A mpich_excluded=()
# MPI names narma does not offer: a test whose own code still calls one after the mapping is
# excluded, with these reasons.
declare -A unmapped_reason=(
)
# MPICH tests that time out at 3 oversubscribed ranks with MPICH itself too.
declare -A mpich_long=(
    [put_flush_get]=1 [acc_flush_get]=1 [gacc_flush_get]=1 [fop_flush_get]=1 [cas_flush_get]=1
    [atomic_rmw_cas]=1 [large_acc_flush_local]=1
    # 10^4 barriers at 3 ranks: 184 s with MPICH alone (127 s through narma on shm)
    [win_shared_put_flush_load]=1 [win_shared_acc_flush_load]=1 [win_shared_gacc_flush_load]=1
    [win_shared_fop_flush_load]=1 [win_shared_cas_flush_load]=1
)
long_timeout=480

# ---- Environment and narma ------------------------------------------------------------------
export NARMA_MPI="${NARMA_MPI:-mpich}"
# shellcheck source=/dev/null
. "$root/scripts/ensure-env.sh"
build="$NARMA_BUILD_DIR"
cmake_extra=()
if [[ ",$transports," == *,ofi,* ]]; then
    # The experimental ofi transport is built only on request, in a build directory of its own
    # (as scripts/test.sh --ofi), with libfabric's headers (libfabric itself is loaded at run
    # time: the MPI library's copy).
    build="$build-ofi"
    [ -e /usr/include/rdma/fabric.h ] || "$root/scripts/apt-install.sh" libfabric-dev
    cmake_extra=(-DNARMA_OFI=ON)
fi
work="${work:-$build/foreign}"
mkdir -p "$work"
work="$(cd -- "$work" && pwd)"
mkdir -p "$work/logs" "$work/bin" "$work/obj"
# (An existing ofi build directory configured without the transport is configured again.)
if [ ! -f "$build/CMakeCache.txt" ] ||
    { [ ${#cmake_extra[@]} -gt 0 ] && ! grep -q '^NARMA_OFI:BOOL=ON' "$build/CMakeCache.txt"; }; then
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DMPI_C_COMPILER="$(command -v mpicc)" -DMPIEXEC_EXECUTABLE="$(command -v mpiexec)" \
        "${cmake_extra[@]}" >"$work/configure.log" 2>&1 || { cat "$work/configure.log" >&2; exit 1; }
fi
nice cmake --build "$build" --target narma >"$work/build-narma.log" 2>&1 ||
    { cat "$work/build-narma.log" >&2; exit 1; }
libdir="$(dirname "$(find "$build/src" -name 'libnarma.so' -print -quit)")"
if [ ${#cmake_extra[@]} -gt 0 ] && ! grep -q 'ofi: window served by mpi alone' "$libdir/libnarma.so"; then
    echo "foreign-suites.sh: $build has no ofi transport (libfabric 1.x headers not found?)" >&2
    exit 1
fi
CC="$(command -v mpicc)"
cflags=(-O2 -g -std=gnu11 -w -I"$root/include" -I"$build/include")
ldflags=(-L"$libdir" -Wl,-rpath,"$libdir" -lnarma -lm)

# ---- Result bookkeeping ---------------------------------------------------------------------
IFS=, read -r -a tlist <<<"$transports"
declare -A pass run excl
rows=()
fail_rows=()

record() { # suite name np result... (one per transport)
    local suite="$1" name="$2" np="$3"
    shift 3
    local line
    line="$(printf '%-7s %-58s %2s' "$suite" "$name" "$np")"
    local i=0 r
    for r in "$@"; do
        line+="$(printf '  %-4s=%-14s' "${tlist[$i]}" "$r")"
        i=$((i + 1))
    done
    echo "$line"
    rows+=("$line")
    case "$*" in *FAIL* | *TIMEOUT* | *NOBUILD*) fail_rows+=("$line") ;; esac
}

exclude() { # suite name np reason
    local line
    line="$(printf '%-7s %-58s %2s  EXCLUDED: %s' "$1" "$2" "$3" "$4")"
    echo "$line"
    rows+=("$line")
    excl[$1]=$((${excl[$1]:-0} + 1))
}

# Run one job on every transport; $1 suite, $2 name, $3 np, $4 timeout, $5 checker, rest: argv.
run_job() {
    local suite="$1" name="$2" np="$3" tmo="$4" check="$5"
    shift 5
    local results=() t log st start end secs
    for t in "${tlist[@]}"; do
        log="$work/logs/$suite.${name//[^A-Za-z0-9_.=-]/_}.np$np.$t.log"
        start=$(date +%s)
        st=0
        # setsid: the job and every process it starts form one group, removed as a whole after a
        # timeout (the launcher's children must not keep spinning on the shared cores).
        # ofi serves pairs of ranks on different nodes only: on one machine every rank is its own
        # pretend node, unless the caller set NARMA_NODE_SIZE.
        local env=(NARMA_TRANSPORT="$t")
        [ -n "${NARMA_NODE_SIZE:-}" ] && env+=(NARMA_NODE_SIZE="$NARMA_NODE_SIZE")
        [ "$t" = ofi ] && env+=(NARMA_NODE_SIZE="${NARMA_NODE_SIZE:-1}" NARMA_VERBOSE=1)
        env "${env[@]}" setsid bash -c 'echo $$ >"$0.pgid"; exec timeout -k 10 "$@"' \
            "$log" "$tmo" nice -n 10 mpiexec -n "$np" "$@" >"$log" 2>&1 </dev/null || st=$?
        kill -KILL -- "-$(cat "$log.pgid")" 2>/dev/null || true
        rm -f "$log.pgid"
        end=$(date +%s)
        secs=$((end - start))
        run[$suite.$t]=$((${run[$suite.$t]:-0} + 1))
        if [ "$st" = 124 ] || [ "$st" = 137 ]; then
            results+=("TIMEOUT(${secs}s)")
        elif [ "$st" = 0 ] && "$check" "$log"; then
            pass[$suite.$t]=$((${pass[$suite.$t]:-0} + 1))
            results+=("PASS(${secs}s$(no_ofi "$t" "$log"))")
        else
            results+=("FAIL(${secs}s$(no_ofi "$t" "$log"))")
        fi
    done
    record "$suite" "$name" "$np" "${results[@]}"
}

check_mpich() { grep -q '^ *No Errors' "$1"; }
check_fompi() { # (narma's own NARMA_VERBOSE lines, "narma: ...", are not the test's)
    grep -q 'No Error' "$1" &&
        ! grep -v -e 'No Error' -e '^narma: ' "$1" | grep -qiE 'error|assert|abort|signal'
}
# ",no-ofi" when an ofi run's window fell back to mpi alone (NARMA_VERBOSE says so).
no_ofi() { [ "$1" = ofi ] && grep -q 'ofi: window served by mpi alone' "$2" && echo ",no-ofi"; true; }

nobuild() { # suite name np log
    local r=() t
    for t in "${tlist[@]}"; do
        r+=("NOBUILD")
        run[$1.$t]=$((${run[$1.$t]:-0} + 1))
    done
    record "$1" "$2" "$3" "${r[@]}"
    echo "        build log: $4"
}

selected() { { [ -z "$only" ] || [[ "$1" =~ $only ]]; } && { [ -z "$skip" ] || ! [[ "$1" =~ $skip ]]; }; }

# ---- foMPI-NA -------------------------------------------------------------------------------
run_fompi() {
    local dir="$1" obj="$work/obj/fompi" bin="$work/bin/fompi_driver" log="$work/logs/build-fompi.log"
    mkdir -p "$obj"
    : >"$log"
    local srcs=() f
    for f in "$dir"/*.c; do
        case "$(basename "$f")" in
        main.c | fixed_size.c | symmetric_heap.c | test_dscqueue.c | test_xpmem_queue.c | \
            total_instructions.c | put_consistency.c | pscw1.c) continue ;; # not cases of main.c
        excl_lock.c) continue ;; # reads foMPI-NA's window internals: builds only against foMPI-NA
        esac
        srcs+=("$f")
    done
    # The suite's own files see narma's stand-in fompi.h first; foMPI-NA's is never used.
    local objs=()
    for f in "${srcs[@]}" "$here/fompi/fompi_driver.c"; do
        local o
        o="$obj/$(basename "$f" .c).o"
        nice "$CC" "${cflags[@]}" -I"$here/fompi" -I"$dir" -c "$f" -o "$o" >>"$log" 2>&1 ||
            { echo "foreign-suites.sh: foMPI-NA: $f does not build (log: $log)" >&2; return 1; }
        objs+=("$o")
    done
    nice "$CC" -o "$bin" "${objs[@]}" "${ldflags[@]}" >>"$log" 2>&1 ||
        { echo "foreign-suites.sh: foMPI-NA: link failed (log: $log)" >&2; return 1; }
    local name flavor id
    while read -r name flavor; do
        id="$name${flavor:+.$flavor}"
        selected "fompi.$id" || continue
        if [ -n "${fompi_excluded[$name]:-}" ]; then
            exclude fompi "$id" 4 "${fompi_excluded[$name]}"
            continue
        fi
        [ "$list_only" = 1 ] && { echo "fompi   $id 4"; continue; }
        # shellcheck disable=SC2086 # flavor is one word or empty
        run_job fompi "$id" 4 "$timeout_default" check_fompi "$bin" "$name" $flavor
    done < <(NARMA_TRANSPORT=shm nice mpiexec -n 4 "$bin" --list 2>/dev/null)
}

# ---- MPICH test/mpi/rma ---------------------------------------------------------------------
# The words of a Makefile.am variable ("name = a b", "name= a b").
mk_values() {
    awk -v t="$2" '{ line = $0; k = line; sub(/[ \t]*=.*/, "", k)
        if (k == t && line ~ /=/) { sub(/^[^=]*=/, "", line); n = split(line, w, /[ \t]+/)
            for (i = 1; i <= n; i++) if (w[i] != "") print w[i] } }' "$1"
}

# Source files and -D flags of a test, from Makefile.am (automake's default: <name>.c).
mpich_sources() {
    local mk="$1/Makefile.am" t="$2" s
    s="$(mk_values "$mk" "${t}_SOURCES" | grep '\.c$' || true)"
    echo "${s:-$t.c}"
}
mpich_cppflags() {
    mk_values "$(dirname "$1")/Makefile.am" "${1##*/}_CPPFLAGS" | grep '^-D' || true
}

# MPI_Win_* names the test's own code still uses after the mapping (preprocessed).
mpich_unmapped() { # rmadir test -D...
    local dir="$1" t="$2"
    shift 2
    local src
    for src in $(mpich_sources "$dir" "$t"); do
        "$CC" -E "${cflags[@]}" "$@" -I"$work/mpich-include" -I"$dir/../include" \
            -include "$here/mpich/mpi_to_narma.h" "$dir/$src" 2>/dev/null |
            awk -v f="$src" '/^# [0-9]+ "/ { own = index($3, f) > 0; next } own' |
            sed -e 's/"\([^"\\]\|\\.\)*"//g' | grep -oE '\bMPI_Win_[A-Za-z_]+\b' | grep -vE '_function$|_fn$' || true
    done | sort -u
}

run_mpich() {
    if [ "$NARMA_MPI_FLAVOR" != mpich ]; then
        echo "foreign-suites.sh: MPICH's tests need an MPICH-family MPI here (the request mapping" \
            "uses int handles; NARMA_MPI=$NARMA_MPI)" >&2
        exit 1
    fi
    local rma="$1" inc="$work/mpich-include" obj="$work/obj/mpich" log="$work/logs/build-mtest.log"
    mkdir -p "$inc" "$obj"
    # The two headers MPICH's configure would generate.
    cat >"$inc/mpitestconf.h" <<'EOF'
/* Generated by narma's scripts/foreign-suites.sh in place of MPICH's configure. */
#define HAVE_STRING_H 1
#define HAVE_UNISTD_H 1
#define HAVE_STDARG_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_RESOURCE_H 1
#define HAVE_GETRUSAGE 1
#define HAVE_MPI_WIN_CREATE 1
#define HAVE_MPI_INIT_THREAD 1
#define THREAD_PACKAGE_NAME THREAD_PACKAGE_POSIX
EOF
    : >"$inc/mtest_mpix.h"
    local mflags=(-I"$inc" -I"$rma/../include" -include "$here/mpich/mpi_to_narma.h")
    local u libobjs=()
    : >"$log"
    for u in mtest.c mtest_common.c mtest_single.c; do
        nice "$CC" "${cflags[@]}" "${mflags[@]}" -c "$rma/../util/$u" -o "$obj/${u%.c}.o" >>"$log" 2>&1 ||
            { echo "foreign-suites.sh: MPICH: util/$u does not build (log: $log)" >&2; return 1; }
        libobjs+=("$obj/${u%.c}.o")
    done
    local line t np rest args tmo key val
    while read -r line; do
        line="${line%%#*}"
        [ -n "${line// /}" ] || continue
        read -r t np rest <<<"$line"
        args=()
        tmo="$timeout_default"
        for kv in $rest; do
            key="${kv%%=*}"
            val="${kv#*=}"
            case "$key" in
            arg) args+=("$val") ;;
            timeLimit) [ "$val" -gt "$tmo" ] && tmo="$val" ;;
            esac
        done
        [ -n "${mpich_long[$t]:-}" ] && tmo="$long_timeout"
        local id="$t${args[*]:+ ${args[*]}}"
        selected "mpich.$id" || continue
        if [ -n "${mpich_excluded[$t]:-}" ]; then
            exclude mpich "$id" "$np" "${mpich_excluded[$t]}"
            continue
        fi
        local defs=()
        mapfile -t defs < <(mpich_cppflags "$rma/$t")
        local names reason="" n
        names="$(mpich_unmapped "$rma" "$t" "${defs[@]}")"
        for n in $names; do
            reason+="${reason:+; }${unmapped_reason[$n]:-$n is not mapped onto narma}"
        done
        if [ -n "$reason" ]; then
            exclude mpich "$id" "$np" "$(printf '%s\n' "$reason" | tr ';' '\n' | sed 's/^ //' | sort -u | paste -sd';' | sed 's/;/; /g')"
            continue
        fi
        [ "$list_only" = 1 ] && { echo "mpich   $id $np"; continue; }
        local exe="$work/bin/mpich_$t" blog="$work/logs/build-mpich-$t.log" srcs=() s
        for s in $(mpich_sources "$rma" "$t"); do srcs+=("$rma/$s"); done
        if [ ! -x "$exe" ] || [ "$exe" -ot "$here/mpich/mpi_to_narma.h" ] || [ "$exe" -ot "$libdir/libnarma.so" ]; then
            if ! nice "$CC" "${cflags[@]}" "${mflags[@]}" "${defs[@]}" -I"$rma" -o "$exe" \
                "${srcs[@]}" "${libobjs[@]}" "${ldflags[@]}" >"$blog" 2>&1; then
                nobuild mpich "$id" "$np" "$blog"
                continue
            fi
        fi
        run_job mpich "$id" "$np" "$tmo" check_mpich "$exe" "${args[@]}"
    done <"$rma/testlist.in"
}

# ---- Dispatch -------------------------------------------------------------------------------
suites=()
for p in "${paths[@]}"; do
    p="$(cd -- "$p" && pwd)"
    if [ -f "$p/tests/test_foMPI-NA/test_mpi3rma.h" ]; then
        run_fompi "$p/tests/test_foMPI-NA"; suites+=(fompi)
    elif [ -f "$p/test_mpi3rma.h" ]; then
        run_fompi "$p"; suites+=(fompi)
    elif [ -f "$p/test/mpi/rma/testlist.in" ]; then
        run_mpich "$p/test/mpi/rma"; suites+=(mpich)
    elif [ -f "$p/rma/testlist.in" ]; then
        run_mpich "$p/rma"; suites+=(mpich)
    elif [ -f "$p/testlist.in" ] && [ -d "$p/../util" ]; then
        run_mpich "$p"; suites+=(mpich)
    else
        echo "foreign-suites.sh: $p is neither foMPI-NA nor MPICH's test/mpi/rma" >&2
        exit 2
    fi
done
[ "$list_only" = 1 ] && exit 0

echo
echo "== totals (MPI $NARMA_MPI_SELECTED, narma $(git -C "$root" describe --always --dirty 2>/dev/null || echo '?'))"
status=0
for s in "${suites[@]}"; do
    for t in "${tlist[@]}"; do
        p=${pass[$s.$t]:-0}
        r=${run[$s.$t]:-0}
        [ "$p" = "$r" ] || status=1
        printf '%-6s %-4s %4d / %-4d passed%s   (%d excluded)\n' "$s" "$t" "$p" "$r" \
            "$([ "$r" -gt 0 ] && awk -v p="$p" -v r="$r" 'BEGIN { printf " = %.1f %%", 100 * p / r }')" \
            "${excl[$s]:-0}"
    done
done
if [ ${#fail_rows[@]} -gt 0 ]; then
    echo "== not passed"
    printf '%s\n' "${fail_rows[@]}"
fi
exit "$status"
}
