#!/usr/bin/env bash
#
# Install Debian packages that are missing, quietly:  scripts/apt-install.sh PACKAGE...
#
# The one place where narma's scripts call apt-get (scripts/ensure-env.sh, scripts/format.sh and
# .ci/run use it), so that every step of CI installs what it needs on a fresh machine by itself.
# Packages already installed are skipped (nothing runs when all are there); `apt-get update` runs
# once per call, only when something has to be installed. Runs apt-get as root directly, or through
# sudo. apt's chatter goes to a log that is printed only when the install fails.
# Exit status: 0 when every package is installed afterwards, 1 otherwise.
set -uo pipefail

say() { printf 'apt-install: %s\n' "$*" >&2; }

[ $# -gt 0 ] || {
    say "usage: scripts/apt-install.sh PACKAGE..."
    exit 2
}

missing=()
for pkg in "$@"; do
    # dpkg-query answers "install ok installed" only for a package that is fully installed.
    if [ "$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null)" != "install ok installed" ]; then
        missing+=("$pkg")
    fi
done
[ "${#missing[@]}" -gt 0 ] || exit 0

command -v apt-get >/dev/null 2>&1 || {
    say "missing ${missing[*]}, and no apt-get to install them: install them by hand"
    exit 1
}
as_root=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || {
        say "need root (or sudo) to install: ${missing[*]}"
        exit 1
    }
    as_root=(sudo)
fi

say "installing with apt-get: ${missing[*]}"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
# Another apt-get (another job on this machine, an unattended upgrade) holding dpkg's or the
# package lists' lock is waited for, up to 10 minutes, instead of failing the install at once
# (apt-get update does not wait on its own: DPkg::Lock::Timeout covers dpkg's lock only).
wait_lock=(-o DPkg::Lock::Timeout=600)
for attempt in $(seq 1 60); do
    if "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "${wait_lock[@]}" update -qq \
        </dev/null >"$log" 2>&1 &&
        "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "${wait_lock[@]}" \
            install -y -qq --no-install-recommends "${missing[@]}" </dev/null >>"$log" 2>&1; then
        exit 0
    fi
    grep -q 'Could not get lock' "$log" || break
    [ "$attempt" -eq 1 ] && say "another apt-get holds its lock: waiting for it (up to 10 minutes)"
    sleep 10
done
cat "$log" >&2
say "apt-get could not install: ${missing[*]}"
exit 1
