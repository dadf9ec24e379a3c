"""ctest driver of the Python tests:
    python run.py --build <dir> --np N --mpiexec <mpiexec> [--preflags "..."] <test file>...

Runs `mpiexec -n N <preflags> python -m pytest <files>` with <build>/python/site (where
scripts/python-env.sh installed the narma package) on PYTHONPATH. Exits 77 (ctest: skipped) with
the reason only when python-env.sh recorded that NumPy/mpi4py/pytest could not be installed;
a missing narma package is an error.
"""
import argparse
import os
import shlex
import subprocess
import sys

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
ap.add_argument("--np", type=int, required=True)
ap.add_argument("--mpiexec", required=True)
ap.add_argument("--preflags", default="")
ap.add_argument("--script", action="store_true",
                help="run the first file as a plain script (the rest are its arguments)")
ap.add_argument("files", nargs="+")
a, extra = ap.parse_known_args()

pydir = os.path.join(a.build, "python")
marker = os.path.join(pydir, "UNAVAILABLE")
if os.path.exists(marker):
    with open(marker) as f:
        print("SKIPPED: the Python test dependencies are not installed:", f.read().strip())
    sys.exit(77)
site = os.path.join(pydir, "site")
if not os.path.isdir(os.path.join(site, "narma")):
    print("FAILED: the narma package is not built in %s (run scripts/python-env.sh %s)"
          % (site, a.build))
    sys.exit(1)

env = dict(os.environ)
env["PYTHONPATH"] = site + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
env["PYTHONDONTWRITEBYTECODE"] = "1"
here = os.path.dirname(os.path.abspath(__file__))
launch = [a.mpiexec, "-n", str(a.np)] + shlex.split(a.preflags.replace(";", " "))
if extra and not a.script:
    ap.error("unknown arguments %s" % extra)
if a.script:
    cmd = launch + [sys.executable] + a.files + extra
else:
    cmd = (launch + [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir",
                     here] + [os.path.join(here, f) for f in a.files])
print(" ".join(cmd), flush=True)
sys.exit(subprocess.call(cmd, env=env))
