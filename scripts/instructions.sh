#!/usr/bin/env bash
#
# Instructions and time per call of narma's critical-path calls, beside MPI's:
#     ./scripts/instructions.sh [--mpi auto|mpich|openmpi|system] [--size N] [--iters N]
#                               [--out DIR] [--install] [-- <more pingpong arguments>]
#
# Runs bench/micro/pingpong on 2 ranks twice, both times with only the schemes whose calls it
# measures on their own (pingpong's per-call table): natively, for ticks and ns per call (median
# over 7 interleaved repetitions), and under `valgrind --tool=callgrind --collect-atstart=no`
# with --instr, where pingpong counts instructions only between the brackets around each
# measured call and dumps once per block, naming the call and how many it made. The dumps are
# summed per call over both ranks; "Ir/call" is that sum over the calls the program counted,
# less the Ir of an empty bracket. Without valgrind the native table is printed and a line says
# why there are no instruction counts; --install installs valgrind with scripts/apt-install.sh.
# NARMA_TRANSPORT (shm, mpi) passes through to both runs. Files go to DIR (default
# <build dir>/instructions): native.txt, native.csv, callgrind.txt, callgrind.out.*,
# instructions.csv.
set -euo pipefail

root="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)"
size=8
cg_iters=200
out=""
install=0
extra=()
schemes=narma_notify,narma_notify_persistent,narma_pscw,mpi_sendrecv,mpi_flush_flag,mpi_pscw

usage() {
    sed -n '3,5p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

while [ $# -gt 0 ]; do
    case "$1" in
    --mpi)
        [ $# -ge 2 ] || usage
        export NARMA_MPI="$2"
        shift
        ;;
    --mpi=*) export NARMA_MPI="${1#--mpi=}" ;;
    --size)
        [ $# -ge 2 ] || usage
        size="$2"
        shift
        ;;
    --iters)
        [ $# -ge 2 ] || usage
        cg_iters="$2"
        shift
        ;;
    --out)
        [ $# -ge 2 ] || usage
        out="$2"
        shift
        ;;
    --install) install=1 ;;
    --)
        shift
        extra=("$@")
        break
        ;;
    -h | --help) usage ;;
    *)
        echo "instructions.sh: unknown option '$1'" >&2
        usage
        ;;
    esac
    shift
done

# shellcheck source=/dev/null # (following it makes shellcheck think its final `return` ends us)
. "$root/scripts/ensure-env.sh"

build="$NARMA_BUILD_DIR"
exe="$build/bench/micro/pingpong"
if [ ! -x "$exe" ]; then
    # The same configuration as scripts/test.sh and scripts/bench.sh.
    mkdir -p "$build"
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DMPI_C_COMPILER="$(command -v mpicc)" -DMPIEXEC_EXECUTABLE="$(command -v mpiexec)" \
        -DMPIEXEC_PREFLAGS="${NARMA_MPIEXEC_PREFLAGS// /;}" >"$build/narma-configure.log" 2>&1 || {
        cat "$build/narma-configure.log" >&2
        echo "instructions.sh: CMake configuration failed (log above)" >&2
        exit 1
    }
fi
cmake --build "$build" --parallel "$(nproc)" >/dev/null

out="${out:-$build/instructions}"
mkdir -p "$out"
rm -f "$out"/callgrind.out.* "$out"/native.csv "$out"/instructions.csv

# shellcheck disable=SC2206 # the flag strings hold several words on purpose
launch=(mpiexec -n 2 $NARMA_MPIEXEC_PREFLAGS $NARMA_MPIEXEC_BIND)
common=(--schemes "$schemes" --sizes "$size" --call-size "$size" --no-bw --no-costs)

echo "== native run: ${launch[*]} pingpong ${common[*]} ${extra[*]}" >&2
"${launch[@]}" "$exe" "${common[@]}" --csv "$out/native.csv" "${extra[@]}" >"$out/native.txt"

have_vg=1
if ! command -v valgrind >/dev/null 2>&1; then
    if [ "$install" = 1 ]; then
        "$root/scripts/apt-install.sh" valgrind || true
    fi
    command -v valgrind >/dev/null 2>&1 || have_vg=0
fi
if [ "$have_vg" = 1 ]; then
    echo "== callgrind run: ${launch[*]} valgrind --tool=callgrind --collect-atstart=no" \
        "pingpong --instr --reps 1 --iters $cg_iters" >&2
    "${launch[@]}" valgrind -q --tool=callgrind --collect-atstart=no \
        --callgrind-out-file="$out/callgrind.out.%p" "$exe" "${common[@]}" --instr --reps 1 \
        --iters "$cg_iters" "${extra[@]}" >"$out/callgrind.txt"
    if ! grep -q '^# instructions    : counted under callgrind' "$out/callgrind.txt"; then
        grep '^# instructions' "$out/callgrind.txt" >&2 || true
        echo "instructions.sh: pingpong counted no instructions (see the line above)" >&2
        have_vg=0
    fi
fi

# The header of the native run (MPI library, narma version, transport, CPU), then the table.
sed -n '/^# MPI library/,/^# ranks measuring/p' "$out/native.txt"
grep '^# counter:' "$out/native.txt" || true
if [ "$have_vg" = 0 ]; then
    echo "# instructions: valgrind not available (./scripts/instructions.sh --install installs it):" \
        "ticks and ns only"
fi

# Each callgrind dump: "desc: Trigger: Client Request: pingpong-calls call=C ... calls=N" and
# "totals: Ir". Sum per call over both ranks and every block, then join the native ticks and ns.
{
    if [ "$have_vg" = 1 ]; then
        cat "$out"/callgrind.out.*
    fi
} | awk -v csv="$out/native.csv" -v out="$out/instructions.csv" -v size="$size" '
    BEGIN {
        FS = ","
        while ((getline line < csv) > 0) {
            split(line, f, ",")
            if (f[1] == "calls" && f[4] == "ticks") ticks[f[2]] = f[5]
            if (f[1] == "calls" && f[4] == "ticks_mean") mean[f[2]] = f[5]
            if (f[1] == "calls" && f[4] == "ns") ns[f[2]] = f[5]
            if (f[1] == "calls" && f[4] == "ticks" && !(f[2] in seen)) { seen[f[2]] = 1; order[++n] = f[2] }
        }
        FS = " "
    }
    /^desc: Trigger: Client Request: pingpong-calls / {
        call = ""; calls = 0
        for (i = 1; i <= NF; i++) {
            if ($i ~ /^call=/) call = substr($i, 6)
            if ($i ~ /^calls=/) calls = substr($i, 7) + 0
        }
        next
    }
    /^totals: / && call != "" { ir[call] += $2; cnt[call] += calls; call = "" }
    END {
        bracket = ("empty_bracket" in cnt && cnt["empty_bracket"] > 0) ? ir["empty_bracket"] / cnt["empty_bracket"] : 0
        printf "# per call at %s B: Ir/call = instructions (callgrind, both ranks, less %.1f Ir of an empty bracket) over the calls counted; ticks (median), mean, ns (from the mean): native run\n", size, bracket
        printf "# %-24s %10s %10s %10s %10s %10s\n", "call", "Ir/call", "calls", "ticks", "mean", "ns"
        print "call,size,ir_per_call,calls,ticks,ticks_mean,ns" > out
        for (k = 1; k <= n; k++) {
            c = order[k]
            if (c == "empty_bracket") continue
            v = (c in cnt && cnt[c] > 0) ? sprintf("%.1f", ir[c] / cnt[c] - bracket) : "-"
            m = (c in cnt) ? cnt[c] : "-"
            printf "  %-24s %10s %10s %10.1f %10.1f %10.1f\n", c, v, m, ticks[c], mean[c], ns[c]
            printf "%s,%s,%s,%s,%s,%s,%s\n", c, size, v, m, ticks[c], mean[c], ns[c] > out
        }
    }'
echo "instructions.sh: files in ${out#"$root"/}" >&2
