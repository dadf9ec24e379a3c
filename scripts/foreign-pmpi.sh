#!/usr/bin/env bash
#
# Run other people's MPI programs through libnarma-mpi (the PMPI interposer), unchanged:
#   ./scripts/foreign-pmpi.sh mpich-rma --src DIR [options]   MPICH's test/mpi/rma (testlist.in)
#   ./scripts/foreign-pmpi.sh osu --src DIR [options]         OSU osu_{put,get,acc}_latency at 8 B
#   ./scripts/foreign-pmpi.sh prk --src DIR [options]         PRK MPIRMA Synch_p2p and Stencil
# Options: --mpi mpich|openmpi  --interposer SO  --transports shm,mpi  --native  --no-native
#          --work DIR  --timeout S  --only REGEX  --skip REGEX  --list (mpich-rma)
#          --np-max N  --no-clamp  --dtp (mpich-rma)   --reps N  --iters N (osu)  --np LIST (prk)
#
# DIR is a copy fetched by hand; nothing of it enters this repository. For mpich-rma: the MPICH
# repository, its test/mpi or test/mpi/rma (with ../include and ../util beside it). For osu: the
# OSU micro-benchmarks (the folder holding c/mpi/one-sided and c/util, or mpi/one-sided and
# util). For prk: ParRes/Kernels (MPIRMA/, common/, include/).
#
# Every program is built as a plain MPI program with the mpicc of the MPI that --mpi (or
# NARMA_MPI, default mpich) selects through scripts/ensure-env.sh, into the work directory
# (default /tmp/narma-foreign-<mpi>), and run
#   - natively, the reference ("native"; --no-native skips it, --native runs only it), and
#   - once per narma transport (--transports, default shm,mpi) with
#     LD_PRELOAD=<interposer> NARMA_TRANSPORT=<t> NARMA_PMPI_REPORT=1, the interposer being
#     --interposer or $NARMA_BUILD_DIR/bindings/pmpi/libnarma-mpi.so. The `narma-pmpi:` lines
#     it prints at MPI_Finalize are counted: windows narma carried ("n") and left to MPI ("p").
# One run at a time, niced, each in its own process group under a timeout (a hang is a failure).
#
# mpich-rma: every entry of testlist.in at its rank count (entries above --np-max, default 4,
# run at --np-max; --no-clamp skips them), arguments and env columns; timeout --timeout
# (default 120 s) or the entry's timeLimit when larger. Pass: exit 0 and " No Errors" printed.
# --dtp adds the datatype-pool tests (testlist.dtp's programs, MPICH's dtpools built here) with
# small counts. Prints a table (native, shm, mpi), totals over the entries run and over those
# that pass natively, the first error lines of each failure; CSV: <work>/mpich-rma.csv.
# osu: osu_put_latency, osu_get_latency, osu_acc_latency, -s pscw|fence|lock|flush,
# -w allocate|create, -m 8:8, 2 ranks pinned ($NARMA_MPIEXEC_BIND); --reps repetitions
# (default 5), each running native and every transport once in rotating order; reports the
# median latency and the median of the per-repetition ratios interposed/native. CSV: osu.csv.
# prk: p2p (PSCW on Win_create) and stencil (fence on Win_allocate) at --np ranks (default 2,4);
# pass: "Solution validates". CSV: prk.csv.
# Exit status: 0 when every interposed run passed (mpich-rma: every run whose native run passed).
set -euo pipefail
# The whole script is one compound command, read completely before it runs: editing the file
# during a long run cannot derail that run.
{

root="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)"

usage() {
    sed -n '3,9p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

suite="${1:-}"
case "$suite" in
mpich-rma | osu | prk) shift ;;
-h | --help | "") usage ;;
*) echo "foreign-pmpi.sh: unknown suite '$suite'" >&2; usage ;;
esac

src=""
interposer=""
transports="shm,mpi"
native=1
interposed=1
work=""
timeout_default=120
only=""
skip=""
list_only=0
np_max=4
clamp=1
dtp=0
reps=5
iters=""
prk_np="2,4"

while [ $# -gt 0 ]; do
    case "$1" in
    --src) src="${2:?}"; shift ;;
    --src=*) src="${1#*=}" ;;
    --mpi) export NARMA_MPI="${2:?}"; shift ;;
    --mpi=*) export NARMA_MPI="${1#*=}" ;;
    --interposer) interposer="${2:?}"; shift ;;
    --interposer=*) interposer="${1#*=}" ;;
    --transports) transports="${2:?}"; shift ;;
    --transports=*) transports="${1#*=}" ;;
    --native) interposed=0 ;;
    --no-native) native=0 ;;
    --work) work="${2:?}"; shift ;;
    --work=*) work="${1#*=}" ;;
    --timeout) timeout_default="${2:?}"; shift ;;
    --timeout=*) timeout_default="${1#*=}" ;;
    --only) only="${2:?}"; shift ;;
    --only=*) only="${1#*=}" ;;
    --skip) skip="${2:?}"; shift ;;
    --skip=*) skip="${1#*=}" ;;
    --list) list_only=1 ;;
    --np-max) np_max="${2:?}"; shift ;;
    --np-max=*) np_max="${1#*=}" ;;
    --no-clamp) clamp=0 ;;
    --dtp) dtp=1 ;;
    --reps) reps="${2:?}"; shift ;;
    --reps=*) reps="${1#*=}" ;;
    --iters) iters="${2:?}"; shift ;;
    --iters=*) iters="${1#*=}" ;;
    --np) prk_np="${2:?}"; shift ;;
    --np=*) prk_np="${1#*=}" ;;
    -h | --help) usage ;;
    *) echo "foreign-pmpi.sh: unknown option '$1'" >&2; usage ;;
    esac
    shift
done
[ -n "$src" ] || { echo "foreign-pmpi.sh: --src DIR is required" >&2; usage; }
[ -d "$src" ] || { echo "foreign-pmpi.sh: no directory $src" >&2; exit 2; }
src="$(cd -- "$src" && pwd)"
[ "$native" = 1 ] || [ "$interposed" = 1 ] || { echo "foreign-pmpi.sh: --native and --no-native exclude each other" >&2; exit 2; }

# ---- Environment ----------------------------------------------------------------------------
export NARMA_MPI="${NARMA_MPI:-mpich}"
# shellcheck source=/dev/null # (following it makes shellcheck think its final `return` ends us)
. "$root/scripts/ensure-env.sh"
CC="$(command -v mpicc)"
work="${work:-/tmp/narma-foreign-$NARMA_MPI_SELECTED}"
mkdir -p "$work"
work="$(cd -- "$work" && pwd)"
case "$work/" in "$root"/*) echo "foreign-pmpi.sh: the work directory must be outside the repository" >&2; exit 2 ;; esac
logs="$work/logs/$suite"
mkdir -p "$logs" "$work/bin" "$work/obj"

configs=()
[ "$native" = 1 ] && configs+=(native)
if [ "$interposed" = 1 ]; then
    interposer="${interposer:-$NARMA_BUILD_DIR/bindings/pmpi/libnarma-mpi.so}"
    if [ ! -f "$interposer" ]; then
        echo "foreign-pmpi.sh: no interposer at $interposer (build libnarma-mpi, give --interposer, or run --native)" >&2
        exit 1
    fi
    interposer="$(cd -- "$(dirname -- "$interposer")" && pwd)/$(basename -- "$interposer")"
    # Run a snapshot: the build directory may be rebuilt during a long run. The interposer and
    # narma (found by soname) are copied and both preloaded, narma first, so that the copy
    # satisfies the interposer's dependency whatever its runpath says.
    snap="$work/interposer.$$"
    mkdir -p "$snap"
    trap 'rm -rf "$snap"' EXIT
    preload=""
    while read -r soname path; do
        cp -L "$path" "$snap/$soname"
        preload+="$snap/$soname "
    done < <(ldd "$interposer" | awk '$1 ~ /^libnarma/ && $3 ~ /^\// { print $1, $3 }')
    cp -L "$interposer" "$snap/$(basename -- "$interposer")"
    preload+="$snap/$(basename -- "$interposer")"
    IFS=, read -r -a tlist <<<"$transports"
    configs+=("${tlist[@]}")
fi
# shellcheck disable=SC2206 # the flag strings hold several words on purpose
preflags=(${NARMA_MPIEXEC_PREFLAGS:-})
# shellcheck disable=SC2206
bindflags=(${NARMA_MPIEXEC_BIND:-})

# The selected MPI's own tool: another MPI's may be on PATH too (Debian's mpichversion).
if [ "$NARMA_MPI_SELECTED" = openmpi ]; then
    mpi_version="$(mpirun --version 2>/dev/null | sed -n '1s/^mpirun (Open MPI)/Open MPI/p' || true)"
else
    mpi_version="$(mpichversion 2>/dev/null | sed -n 's/MPICH Version:[[:space:]]*/MPICH /p' || true)"
fi
echo "# foreign-pmpi.sh $suite: MPI $NARMA_MPI_SELECTED (${mpi_version:-?}, $CC)"
echo "# source $src; work $work; configurations: ${configs[*]}"
if [ "$interposed" = 1 ]; then
    echo "# interposer $interposer of $(date -r "$interposer" '+%F %T') (narma tree $(git -C "$root" describe --always --dirty 2>/dev/null || echo '?')), run from the copy in $snap"
fi

selected() { { [ -z "$only" ] || [[ "$1" =~ $only ]]; } && { [ -z "$skip" ] || ! [[ "$1" =~ $skip ]]; }; }

# ---- Running one program --------------------------------------------------------------------
# run_one CONFIG NP TIMEOUT LOG BIND(0|1) ENV... -- EXE ARGS...
# Sets RES (PASS|FAIL|TIMEOUT; PASS only when the caller's check later agrees) and SECS.
RES=""
SECS=0
run_one() {
    local cfg="$1" np="$2" tmo="$3" log="$4" bind="$5"
    shift 5
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    if [ "$cfg" != native ]; then
        envs+=("LD_PRELOAD=$preload" "NARMA_TRANSPORT=$cfg" "NARMA_PMPI_REPORT=1")
    fi
    local launch=(mpiexec "${preflags[@]}" -n "$np")
    [ "$bind" = 1 ] && launch+=("${bindflags[@]}")
    # The preload reaches the ranks only (through env), never the launcher.
    [ ${#envs[@]} -gt 0 ] && launch+=(env "${envs[@]}")
    local st=0 start end
    start=$(date +%s.%N)
    # setsid: the launcher and every process it starts form one group, removed as a whole after
    # a timeout, so that no rank keeps spinning on the shared cores.
    # shellcheck disable=SC2016 # $$ and $0 belong to the inner shell
    setsid bash -c 'echo $$ >"$0"; exec timeout -k 10 "$@"' \
        "$log.pgid" "$tmo" nice -n 10 "${launch[@]}" "$@" >"$log" 2>&1 </dev/null || st=$?
    kill -KILL -- "-$(cat "$log.pgid")" 2>/dev/null || true
    rm -f "$log.pgid"
    end=$(date +%s.%N)
    SECS=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.0f", b - a }')
    if [ "$st" = 124 ] || [ "$st" = 137 ]; then
        RES=TIMEOUT
    elif [ "$st" = 0 ]; then
        RES=PASS
    else
        RES=FAIL
    fi
}

# What rank 0's report (NARMA_PMPI_REPORT=1, at MPI_Finalize) says: "n<windows narma
# carried>/p<windows passed through to MPI>", "-" without a report (e.g. no MPI_Finalize).
# Its summary line: "narma-pmpi: rank 0: C window(s) carried by narma, P passed through to MPI";
# without one, the window lines are counted ("narma carried ..." / "passed through ...").
report_summary() {
    awk '/^narma-pmpi:/ { any = 1 }
         /^narma-pmpi:.*window\(s\) carried by narma/ {
            for (i = 1; i <= NF; i++) { if ($i == "window(s)") c = $(i - 1); if ($i == "passed") q = $(i - 1) }
            sum = 1; next }
         /^narma-pmpi:.*narma carried/ { n++; next }
         /^narma-pmpi:.*passed through/ { p++ }
         END { if (!any) print "-"; else if (sum) printf "n%d/p%d\n", c, q; else printf "n%d/p%d\n", n, p }' "$1"
}

# The first lines of a log that say what went wrong.
first_errors() {
    local lines
    lines="$(grep -av '^narma-pmpi:' "$1" | grep -a -m 3 -iE 'error|fail|abort|assert|signal|fatal|expected|mismatch|wrong|found|invalid|timeout|killed|segmentation' || true)"
    [ -n "$lines" ] || lines="$(grep -av '^narma-pmpi:' "$1" | head -n 3)"
    printf '%s\n' "$lines" | cut -c1-200 | sed 's/^/        | /'
}

csv_field() { local s="${1//\"/\"\"}"; printf '"%s"' "$s"; }

# ---- MPICH test/mpi/rma ---------------------------------------------------------------------
# The words of a Makefile.am variable ("name = a b", "name= a b").
mk_values() {
    awk -v t="$2" '{ line = $0; k = line; sub(/[ \t]*=.*/, "", k)
        if (k == t && line ~ /=/) { sub(/^[^=]*=/, "", line); n = split(line, w, /[ \t]+/)
            for (i = 1; i <= n; i++) if (w[i] != "") print w[i] } }' "$1"
}

run_mpich_rma() {
    local rma=""
    if [ -f "$src/test/mpi/rma/testlist.in" ]; then rma="$src/test/mpi/rma"
    elif [ -f "$src/rma/testlist.in" ]; then rma="$src/rma"
    elif [ -f "$src/testlist.in" ] && [ -d "$src/../util" ]; then rma="$src"
    else echo "foreign-pmpi.sh: $src holds no MPICH test/mpi/rma/testlist.in" >&2; exit 2; fi
    local top="$rma/.." inc="$work/mpich-include" obj="$work/obj/mpich" bin="$work/bin/mpich"
    mkdir -p "$inc" "$obj" "$bin"
    # The headers MPICH's configure and autogen would generate.
    cat >"$inc/mpitestconf.h.new" <<'EOF'
/* Written by narma's scripts/foreign-pmpi.sh in place of MPICH's test configure. */
#define HAVE_STRING_H 1
#define HAVE_STDLIB_H 1
#define HAVE_UNISTD_H 1
#define HAVE_STDARG_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_RESOURCE_H 1
#define HAVE_GETRUSAGE 1
#define HAVE_MPI_WIN_CREATE 1
#define HAVE_MPI_INIT_THREAD 1
#define HAVE_LONG_DOUBLE 1
#define HAVE_LONG_LONG 1
#define THREAD_PACKAGE_NAME THREAD_PACKAGE_POSIX
EOF
    cmp -s "$inc/mpitestconf.h.new" "$inc/mpitestconf.h" || mv "$inc/mpitestconf.h.new" "$inc/mpitestconf.h"
    rm -f "$inc/mpitestconf.h.new"
    [ -f "$inc/mtest_mpix.h" ] || : >"$inc/mtest_mpix.h"
    cat >"$inc/dtpoolsconf.h" <<'EOF'
#define HAVE_STDLIB_H 1
#define HAVE_STRING_H 1
#define HAVE_LIMITS_H 1
#define HAVE_STDINT_H 1
#define HAVE_STRDUP 1
#define HAVE_MEMSET 1
EOF
    local cflags=(-O2 -g -w -I"$inc" -I"$top/include" -I"$top/dtpools/include" -I"$rma")
    local blog="$logs/build-mtest.log" u libobjs=()
    : >"$blog"
    for u in mtest.c mtest_common.c mtest_single.c; do
        if [ ! -f "$obj/${u%.c}.o" ] || [ "$obj/${u%.c}.o" -ot "$top/util/$u" ]; then
            nice "$CC" "${cflags[@]}" -c "$top/util/$u" -o "$obj/${u%.c}.o" >>"$blog" 2>&1 ||
                { echo "foreign-pmpi.sh: MPICH util/$u does not build (log: $blog)" >&2; exit 1; }
        fi
        libobjs+=("$obj/${u%.c}.o")
    done

    # The test list: testlist.in, and with --dtp the datatype-pool programs at small counts
    # (MPICH generates testlist.dtp from maint/dtp-test-config.txt; its large counts take
    # minutes per run on two cores).
    local list="$work/mpich-testlist"
    sed -e 's/#.*//' -e 's/@[a-z_]*@//g' "$rma/testlist.in" | awk 'NF' >"$list"
    local dtpobjs=()
    if [ "$dtp" = 1 ]; then
        local f d seed=1
        mkdir -p "$obj/dtpools"
        # dtpools_internal.h includes "../dtpoolsconf.h": give it one beside a copy of include/.
        mkdir -p "$work/dtpools/include"
        cp "$top/dtpools/include/"*.h "$work/dtpools/include/"
        cp "$inc/dtpoolsconf.h" "$work/dtpools/dtpoolsconf.h"
        for f in "$top/dtpools/src/"*.c; do
            d="$obj/dtpools/$(basename "$f" .c).o"
            if [ ! -f "$d" ] || [ "$d" -ot "$f" ]; then
                nice "$CC" -O2 -g -w -I"$work/dtpools/include" \
                    -DDTP_MPI_DATATYPE="MPI_INT,MPI_INT:4+MPI_DOUBLE:8" -c "$f" -o "$d" >>"$blog" 2>&1 ||
                    { echo "foreign-pmpi.sh: MPICH dtpools $(basename "$f") does not build (log: $blog)" >&2; exit 1; }
            fi
            dtpobjs+=("$d")
        done
        for t in accfence1:4 accpscw1:4 epochtest:4 getfence1:2 putfence1:2 putpscw1:4 \
            lock_contention_dt:4 lock_dt:2 lock_dt_flush:2 lock_dt_flushlocal:2 lockall_dt:4 \
            lockall_dt_flush:4 lockall_dt_flushall:4 lockall_dt_flushlocal:4 lockall_dt_flushlocalall:4; do
            echo "${t%%:*} ${t#*:} arg=-typelist=MPI_INT,MPI_INT:4+MPI_DOUBLE:8 arg=-counts=1,17,512,1018 arg=-seed=$seed arg=-testsizes=2,16 dtp=1"
            seed=$((seed + 10))
        done >>"$list"
    fi

    local csv="$work/mpich-rma.csv"
    echo "test,np,listed_np,config,result,seconds,narma_report,log" >"$csv"
    # Native results are kept per work directory (the last run of an entry wins), so that a
    # run with --no-native still compares with the reference.
    local ncache="$work/mpich-rma.native.tsv" cid cnp cres csecs
    declare -A cached=()
    if [ -f "$ncache" ]; then
        while IFS=$'\t' read -r cid cnp cres csecs; do cached[$cid@$cnp]="$cres ${csecs}s*"; done <"$ncache"
    fi
    local show_native=0
    { [ "$native" = 1 ] || [ ${#cached[@]} -gt 0 ]; } && show_native=1
    local header
    header="$(printf '%-58s %3s' "test" "np")"
    local c
    [ "$native" = 0 ] && [ "$show_native" = 1 ] && header+="$(printf '  %-18s' "native*")"
    for c in "${configs[@]}"; do header+="$(printf '  %-18s' "$c")"; done
    [ "$list_only" = 1 ] || { echo; echo "$header  notes"; }

    declare -A npass=() nrun=() built=()
    local n_entries=0 n_skipped=0 n_native_pass=0 fails=() skipped=() nobuild=()
    declare -A npass_app=() seen=() ncarried=() nthrough=() nnowin=() nnorep=()
    local line t np rest args envs tmo note id xfail
    while read -r line; do
        read -r t np rest <<<"$line"
        args=(); envs=(); tmo="$timeout_default"; note=""; xfail=""
        local isdtp=0 listed_np="$np"
        for kv in $rest; do
            case "${kv%%=*}" in
            arg) args+=("${kv#*=}") ;;
            env) envs+=("${kv#*=}") ;;
            timeLimit) [ "${kv#*=}" -gt "$tmo" ] && tmo="${kv#*=}" ;;
            xfail) xfail="${kv#*=}"; note+=" xfail=$xfail" ;;
            mem | mpiversion | strict | resultTest | mpix) note+=" $kv" ;;
            dtp) isdtp=1 ;;
            esac
        done
        id="$t${args[*]:+ ${args[*]}}"
        [ "$isdtp" = 1 ] && id="$t [dtp]"
        selected "$id" || continue
        if [ "$np" -gt "$np_max" ]; then
            if [ "$clamp" = 1 ]; then
                note+=" np $np->$np_max"
                np="$np_max"
            else
                skipped+=("$id (np $np > $np_max)")
                n_skipped=$((n_skipped + 1))
                continue
            fi
        fi
        # An entry moved to --np-max that the list already has at that count runs once.
        [ -z "${seen[$id@$np]:-}" ] || continue
        seen[$id@$np]=1
        if [ "$list_only" = 1 ]; then
            printf '%-58s %3s %s\n' "$id" "$np" "$note"
            continue
        fi
        n_entries=$((n_entries + 1))
        # Build the program once: sources and -D flags from Makefile.am (automake's default:
        # <name>.c).
        local exe="$bin/$t"
        if [ -z "${built[$t]:-}" ]; then
            local srcs=() defs=() s blog1="$logs/build-$t.log"
            for s in $(mk_values "$rma/Makefile.am" "${t}_SOURCES" | grep '\.c$' || true); do srcs+=("$rma/$s"); done
            [ ${#srcs[@]} -gt 0 ] || srcs=("$rma/$t.c")
            mapfile -t defs < <(mk_values "$rma/Makefile.am" "${t}_CPPFLAGS" | grep '^-D' || true)
            local extra=()
            [ "$isdtp" = 1 ] && extra=("${dtpobjs[@]}")
            local newest=1 f2
            if [ -x "$exe" ]; then
                newest=0
                for f2 in "${srcs[@]}" "$inc/mpitestconf.h"; do [ "$f2" -nt "$exe" ] && newest=1; done
            fi
            built[$t]=ok
            if [ "$newest" = 1 ] && ! nice "$CC" "${cflags[@]}" "${defs[@]}" -o "$exe" "${srcs[@]}" \
                "${libobjs[@]}" "${extra[@]}" -lm >"$blog1" 2>&1; then
                built[$t]=fail
            fi
        fi
        local row cells=() cfg log res rep native_res=""
        row="$(printf '%-58s %3s' "${id:0:58}" "$np")"
        if [ "$native" = 0 ] && [ "$show_native" = 1 ]; then
            native_res="${cached[$id@$np]:-}"
            row+="$(printf '  %-18s' "${native_res:-?}")"
            native_res="${native_res%% *}"
            [ "$native_res" = PASS ] && n_native_pass=$((n_native_pass + 1))
        fi
        if [ "${built[$t]}" = fail ]; then
            nobuild+=("$id")
            for cfg in "${configs[@]}"; do
                row+="$(printf '  %-18s' NOBUILD)"
                nrun[$cfg]=$((${nrun[$cfg]:-0} + 1))
                echo "$(csv_field "$id"),$np,$listed_np,$cfg,NOBUILD,0,,$(csv_field "$logs/build-$t.log")" >>"$csv"
            done
            echo "$row  build log: $logs/build-$t.log"
            continue
        fi
        for cfg in "${configs[@]}"; do
            log="$logs/${id//[^A-Za-z0-9_.=-]/_}.np$np.$cfg.log"
            run_one "$cfg" "$np" "$tmo" "$log" 0 "${envs[@]}" -- "$exe" "${args[@]}"
            res="$RES"
            if [ "$res" = PASS ] && ! grep -q '^ *No Errors' "$log"; then res=FAIL; fi
            rep=""
            [ "$cfg" = native ] || rep="$(report_summary "$log")"
            nrun[$cfg]=$((${nrun[$cfg]:-0} + 1))
            [ "$res" = PASS ] && npass[$cfg]=$((${npass[$cfg]:-0} + 1))
            if [ "$cfg" = native ]; then
                native_res="$res"
                printf '%s\t%s\t%s\t%s\n' "$id" "$np" "$res" "$SECS" >>"$ncache"
                [ "$res" = PASS ] && n_native_pass=$((n_native_pass + 1))
            elif [ "$native_res" = PASS ] && [ "$res" = PASS ]; then
                npass_app[$cfg]=$((${npass_app[$cfg]:-0} + 1))
            fi
            [ "$res" = PASS ] || fails+=("$id|$np|$cfg|$res|$log")
            # Which passes narma carried (rank 0 had a window of narma's).
            if [ "$res" = PASS ] && [ "$cfg" != native ]; then
                case "$rep" in
                n0/p0) nnowin[$cfg]=$((${nnowin[$cfg]:-0} + 1)) ;;
                n0/*) nthrough[$cfg]=$((${nthrough[$cfg]:-0} + 1)) ;;
                n*) ncarried[$cfg]=$((${ncarried[$cfg]:-0} + 1)) ;;
                *) nnorep[$cfg]=$((${nnorep[$cfg]:-0} + 1)) ;;
                esac
            fi
            row+="$(printf '  %-18s' "$res ${SECS}s${rep:+ $rep}")"
            echo "$(csv_field "$id"),$np,$listed_np,$cfg,$res,$SECS,$rep,$(csv_field "$log")" >>"$csv"
        done
        echo "$row ${note}"
    done <"$list"
    [ "$list_only" = 1 ] && return 0

    echo
    echo "== totals: $n_entries entries run ($n_skipped skipped), MPI $NARMA_MPI_SELECTED"
    local status=0 p r
    for cfg in "${configs[@]}"; do
        p=${npass[$cfg]:-0}; r=${nrun[$cfg]:-0}
        if [ "$cfg" = native ]; then
            printf '%-7s %4d / %-4d pass (%s)\n' "$cfg" "$p" "$r" "$(awk -v p="$p" -v r="$r" 'BEGIN { printf "%.1f %%", r ? 100 * p / r : 0 }')"
        else
            local pa=${npass_app[$cfg]:-0}
            printf '%-7s %4d / %-4d pass (%s); of the %d that pass natively: %d (%s)\n' "$cfg" "$p" "$r" \
                "$(awk -v p="$p" -v r="$r" 'BEGIN { printf "%.1f %%", r ? 100 * p / r : 0 }')" \
                "$n_native_pass" "$pa" "$(awk -v p="$pa" -v r="$n_native_pass" 'BEGIN { printf "%.1f %%", r ? 100 * p / r : 0 }')"
            printf '        of its %d passes: narma carried windows in %d, only windows passed through to MPI in %d, no window on rank 0 in %d, no report in %d\n' \
                "$p" "${ncarried[$cfg]:-0}" "${nthrough[$cfg]:-0}" "${nnowin[$cfg]:-0}" "${nnorep[$cfg]:-0}"
            [ "$show_native" = 1 ] && [ "$pa" != "$n_native_pass" ] && status=1
            [ "$show_native" = 0 ] && [ "$p" != "$r" ] && status=1
        fi
    done
    [ "$native" = 0 ] && [ "$show_native" = 1 ] && echo "(native*: the last native run of the entry recorded in $ncache)"
    if [ ${#skipped[@]} -gt 0 ]; then
        echo "== skipped (rank count above --np-max)"
        printf '   %s\n' "${skipped[@]}"
    fi
    if [ ${#fails[@]} -gt 0 ]; then
        echo "== not passed (first error lines)"
        local f2 fid fnp fcfg fres flog
        for f2 in "${fails[@]}"; do
            IFS='|' read -r fid fnp fcfg fres flog <<<"$f2"
            echo "   $fid (np $fnp) [$fcfg] $fres   $flog"
            first_errors "$flog"
        done
    fi
    echo "CSV: $csv"
    return "$status"
}

# ---- OSU one-sided latency ------------------------------------------------------------------
run_osu() {
    local util="" os=""
    if [ -d "$src/c/util" ]; then util="$src/c/util"; os="$src/c/mpi/one-sided"
    elif [ -d "$src/util" ] && [ -d "$src/mpi/one-sided" ]; then util="$src/util"; os="$src/mpi/one-sided"
    else echo "foreign-pmpi.sh: $src holds no OSU micro-benchmarks (c/util, c/mpi/one-sided)" >&2; exit 2; fi
    local bin="$work/bin/osu" b u blog="$logs/build.log"
    mkdir -p "$bin"
    : >"$blog"
    local utils=("$util/osu_util.c")
    # OSU 7.x splits its utilities further (PAPI, graphs, validation: stubs unless enabled).
    for u in osu_util_mpi osu_util_papi osu_util_graph osu_util_validation; do
        [ -f "$util/$u.c" ] && utils+=("$util/$u.c")
    done
    for b in put get acc; do
        if [ ! -x "$bin/osu_${b}_latency" ] || [ "$os/osu_${b}_latency.c" -nt "$bin/osu_${b}_latency" ]; then
            nice "$CC" -O2 -w -I"$util" -o "$bin/osu_${b}_latency" "$os/osu_${b}_latency.c" "${utils[@]}" -lm >>"$blog" 2>&1 ||
                { echo "foreign-pmpi.sh: osu_${b}_latency does not build (log: $blog)" >&2; exit 1; }
        fi
    done
    local csv="$work/osu.csv" rawcsv="$work/osu-runs.csv"
    echo "bench,sync,window,rep,config,latency_us,narma_report" >"$rawcsv"
    local itflags=()
    [ -n "$iters" ] && itflags=(-i "$iters" -x "$((iters / 10 + 1))")
    local sync win rep k cfg log lat nc=${#configs[@]} any_fail=0
    declare -A lats=()
    declare -A reports=()
    for b in put get acc; do
        for sync in pscw fence lock flush; do
            for win in allocate create; do
                local id="osu_${b}_latency -s $sync -w $win"
                selected "$id" || continue
                for rep in $(seq 1 "$reps"); do
                    # Rotating order: each configuration runs first in some repetition.
                    for k in $(seq 0 $((nc - 1))); do
                        cfg="${configs[$(((k + rep) % nc))]}"
                        log="$logs/${b}.${sync}.${win}.$cfg.r$rep.log"
                        run_one "$cfg" 2 "$timeout_default" "$log" 1 -- "$bin/osu_${b}_latency" \
                            -s "$sync" -w "$win" -m 8:8 "${itflags[@]}"
                        lat="$(awk '$1 == 8 && NF >= 2 { print $2; exit }' "$log")"
                        if [ "$RES" != PASS ] || [ -z "$lat" ]; then
                            lat=NA
                            any_fail=1
                            echo "   $id [$cfg] rep $rep: $RES, no latency (log: $log)" >&2
                            first_errors "$log" >&2
                        fi
                        lats[$b.$sync.$win.$cfg.$rep]="$lat"
                        [ "$cfg" = native ] || reports[$b.$sync.$win.$cfg]="$(report_summary "$log")"
                        echo "$b,$sync,$win,$rep,$cfg,$lat,${reports[$b.$sync.$win.$cfg]:-}" >>"$rawcsv"
                    done
                done
            done
        done
    done
    # Medians of the latencies and of the per-repetition ratios interposed/native.
    echo
    local header
    header="$(printf '%-5s %-6s %-9s' bench sync window)"
    for cfg in "${configs[@]}"; do header+="$(printf ' %10s' "$cfg(us)")"; done
    if [ "$native" = 1 ] && [ "$interposed" = 1 ]; then
        for cfg in "${tlist[@]}"; do header+="$(printf ' %11s' "$cfg/native")"; done
        header+="  target"
    fi
    echo "== OSU latency at 8 B, 2 ranks, medians of $reps repetitions (MPI $NARMA_MPI_SELECTED)"
    echo "$header"
    echo "bench,sync,window,config,median_latency_us,median_ratio_to_native,target_ratio,meets_target,narma_report" >"$csv"
    local status=0
    median() { tr ' ' '\n' | grep -v '^NA$' | grep . | sort -g | awk '{ v[NR] = $1 } END { if (!NR) print "NA"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.4g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
    for b in put get acc; do
        for sync in pscw fence lock flush; do
            for win in allocate create; do
                selected "osu_${b}_latency -s $sync -w $win" || continue
                local row med vals ratios target verdict
                row="$(printf '%-5s %-6s %-9s' "$b" "$sync" "$win")"
                for cfg in "${configs[@]}"; do
                    vals=""
                    for rep in $(seq 1 "$reps"); do vals+=" ${lats[$b.$sync.$win.$cfg.$rep]}"; done
                    med="$(echo "$vals" | median)"
                    row+="$(printf ' %10s' "$med")"
                    [ "$native" = 1 ] && [ "$cfg" = native ] && echo "$b,$sync,$win,$cfg,$med,1,,," >>"$csv"
                    [ "$native" = 1 ] || echo "$b,$sync,$win,$cfg,$med,,,,${reports[$b.$sync.$win.$cfg]:-}" >>"$csv"
                done
                if [ "$native" = 1 ] && [ "$interposed" = 1 ]; then
                    case "$sync" in pscw | fence) target=0.667 ;; *) target=1.0 ;; esac
                    verdict=ok
                    for cfg in "${tlist[@]}"; do
                        ratios=""
                        for rep in $(seq 1 "$reps"); do
                            ratios+=" $(awk -v a="${lats[$b.$sync.$win.$cfg.$rep]}" -v n="${lats[$b.$sync.$win.native.$rep]}" \
                                'BEGIN { if (a == "NA" || n == "NA" || n + 0 == 0) print "NA"; else printf "%.4f\n", a / n }')"
                        done
                        med="$(echo "$ratios" | median)"
                        row+="$(printf ' %11s' "$med")"
                        vals=""
                        for rep in $(seq 1 "$reps"); do vals+=" ${lats[$b.$sync.$win.$cfg.$rep]}"; done
                        local ok
                        ok="$(awk -v m="$med" -v t="$target" 'BEGIN { print (m != "NA" && m + 0 <= t + 0) ? "yes" : "no" }')"
                        [ "$ok" = yes ] || verdict=MISSED
                        echo "$b,$sync,$win,$cfg,$(echo "$vals" | median),$med,$target,$ok,${reports[$b.$sync.$win.$cfg]:-}" >>"$csv"
                    done
                    [ "$verdict" = ok ] || status=1
                    row+="  <= $target $verdict"
                fi
                echo "$row"
            done
        done
    done
    [ "$interposed" = 1 ] && echo "(narma report of the last interposed run of each row: see the narma_report column of $csv)"
    echo "CSV: $csv (per run: $rawcsv)"
    [ "$any_fail" = 0 ] || status=1
    return "$status"
}

# ---- PRK MPIRMA Synch_p2p and Stencil -------------------------------------------------------
run_prk() {
    if [ ! -f "$src/MPIRMA/Synch_p2p/p2p.c" ] || [ ! -f "$src/MPIRMA/Stencil/stencil.c" ]; then
        echo "foreign-pmpi.sh: $src holds no PRK MPIRMA/Synch_p2p and MPIRMA/Stencil" >&2
        exit 2
    fi
    local bin="$work/bin/prk" b="$work/obj/prk" blog="$logs/build.log"
    mkdir -p "$bin" "$b"
    : >"$blog"
    local flags=(-O3 -w -DMPI -DVERBOSE=0 -DRESTRICT_KEYWORD=0 -I"$src/include" -I"$b")
    local common=("$src/common/MPI_bail_out.c" "$src/common/wtime.c")
    # Stencil's loop body comes from PRK's generator (radius 2, star; the Makefile's defaults).
    (cd "$b" && sh "$src/common/Stencil/loop_gen" 2 1 && sh "$src/common/Stencil/loop_gen" 2 0) >>"$blog" 2>&1
    nice "$CC" "${flags[@]}" -o "$bin/p2p" "$src/MPIRMA/Synch_p2p/p2p.c" "${common[@]}" -lm >>"$blog" 2>&1 ||
        { echo "foreign-pmpi.sh: PRK p2p does not build (log: $blog)" >&2; exit 1; }
    nice "$CC" "${flags[@]}" -DRADIUS=2 -DSTAR=1 -DDOUBLE=1 -DLOOPGEN=0 -o "$bin/stencil" \
        "$src/MPIRMA/Stencil/stencil.c" "${common[@]}" -lm >>"$blog" 2>&1 ||
        { echo "foreign-pmpi.sh: PRK stencil does not build (log: $blog)" >&2; exit 1; }
    local csv="$work/prk.csv"
    echo "kernel,np,args,config,result,seconds,rate_mflops,avg_time_s,narma_report,log" >"$csv"
    echo
    printf '%-30s %3s' kernel np
    local cfg
    for cfg in "${configs[@]}"; do printf '  %-34s' "$cfg"; done
    echo
    local status=0 np k exe kargs log res rate avg rep cells
    IFS=, read -r -a nps <<<"$prk_np"
    for np in "${nps[@]}"; do
        for k in "p2p 20 1000 200" "stencil 50 1000"; do
            read -r exe kargs <<<"$k"
            selected "$exe" || continue
            cells="$(printf '%-30s %3s' "$exe $kargs" "$np")"
            for cfg in "${configs[@]}"; do
                log="$logs/$exe.np$np.$cfg.log"
                # shellcheck disable=SC2086 # kargs holds several words on purpose
                run_one "$cfg" "$np" "$timeout_default" "$log" "$([ "$np" -le 2 ] && echo 1 || echo 0)" -- "$bin/$exe" $kargs
                res="$RES"
                if [ "$res" = PASS ] && ! grep -q 'Solution validates' "$log"; then res=FAIL; fi
                rate="$(sed -n 's/.*Rate (MFlops\/s): *\([0-9.eE+-]*\).*/\1/p' "$log" | head -n 1)"
                avg="$(sed -n 's/.*Avg time (s): *\([0-9.eE+-]*\).*/\1/p' "$log" | head -n 1)"
                rep=""
                [ "$cfg" = native ] || rep="$(report_summary "$log")"
                [ "$res" = PASS ] || { [ "$cfg" = native ] || status=1; }
                cells+="$(printf '  %-34s' "$res ${SECS}s ${rate:-?}MF/s${rep:+ $rep}")"
                echo "$exe,$np,$(csv_field "$kargs"),$cfg,$res,$SECS,$rate,$avg,$rep,$(csv_field "$log")" >>"$csv"
                if [ "$res" != PASS ]; then
                    echo "   $exe np $np [$cfg] $res: $log" >&2
                    first_errors "$log" >&2
                fi
            done
            echo "$cells"
        done
    done
    echo "CSV: $csv"
    return "$status"
}

# Called as plain commands, so that set -e holds inside them; their status is the script's.
case "$suite" in
mpich-rma) run_mpich_rma ;;
osu) run_osu ;;
prk) run_prk ;;
esac
exit 0
}
