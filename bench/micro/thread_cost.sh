#!/usr/bin/env bash
#
# What narma's process lock costs a single-threaded caller, measured side by side:
#     bench/micro/thread_cost.sh <build dir> [pairs (default 9)] [-- <threads arguments>]
#
# Runs the `threads` benchmark pairs times with NARMA_THREADS=off and =on, alternately (which
# one goes first alternates too), MPI at MPI_THREAD_MULTIPLE in both, 2 ranks pinned, and
# prints each pair's figures, the medians of the per-pair ratios on/off of the 8-byte notified
# ping-pong (pp_us) and of the cost of an empty call (call_ns), and the multithreaded rates of
# the last "on" run. MPIEXEC overrides the launcher (default: mpiexec -n 2 with core binding).
set -euo pipefail

[ $# -ge 1 ] || { sed -n '3,4p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
build="$1"
shift
pairs=9
if [ $# -ge 1 ] && [ "$1" != "--" ]; then
    pairs="$1"
    shift
fi
[ "${1:-}" = "--" ] && shift
exe="$build/bench/micro/threads"
[ -x "$exe" ] || { echo "thread_cost.sh: $exe is not built" >&2; exit 1; }

if [ -z "${MPIEXEC:-}" ]; then
    if mpiexec --version 2>&1 | grep -qi "open mpi\|open-mpi\|openrte"; then
        MPIEXEC="mpiexec -n 2 --bind-to core"
    else
        MPIEXEC="mpiexec -n 2 -bind-to core"
    fi
fi

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
for ((i = 1; i <= pairs; i++)); do
    if ((i % 2)); then order="off on"; else order="on off"; fi
    for mode in $order; do
        # shellcheck disable=SC2086 # the launcher is a command line
        NARMA_THREADS=$mode $MPIEXEC "$exe" "$@" >"$out/$i.$mode" 2>"$out/$i.$mode.err" || {
            cat "$out/$i.$mode.err" >&2
            echo "thread_cost.sh: run $i ($mode) failed" >&2
            exit 1
        }
    done
done

head -n 1 "$out/1.on"
printf '%-5s %10s %10s %8s %10s %10s %8s\n' pair pp_off_us pp_on_us ratio call_off call_on ratio
for ((i = 1; i <= pairs; i++)); do
    awk -v i="$i" '
        FNR == NR && $1 == "pp_us" { po = $2 } FNR == NR && $1 == "call_ns" { co = $2 }
        FNR != NR && $1 == "pp_us" { pn = $2 } FNR != NR && $1 == "call_ns" { cn = $2 }
        END { printf "%-5d %10.4f %10.4f %8.3f %10.2f %10.2f %8.3f\n", i, po, pn, pn / po, co, cn, cn / co }
    ' "$out/$i.off" "$out/$i.on"
done | tee "$out/table"
med() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
printf 'median of per-pair ratios on/off: ping-pong %s, empty call %s\n' \
    "$(awk '{ print $4 }' "$out/table" | med)" "$(awk '{ print $7 }' "$out/table" | med)"
printf 'median empty call: off %s ns, on %s ns\n' \
    "$(awk '{ print $5 }' "$out/table" | med)" "$(awk '{ print $6 }' "$out/table" | med)"
grep '^rate' "$out/$pairs.on" | sed 's/^/lock on, notified puts per second per rank: /'
