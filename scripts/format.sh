#!/usr/bin/env bash
#
# Format narma's C sources with the committed .clang-format:
#     ./scripts/format.sh           rewrite the files in place
#     ./scripts/format.sh --check   change nothing; list unformatted files and fail if there are any
# Covers *.c and *.h under include/ src/ tests/ bench/ tools/ examples/ scripts/foreign/ (tracked
# or not, build trees excluded). Installs clang-format with apt-get when it is missing.
set -euo pipefail

root="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)"
check=0
case "${1:-}" in
"") ;;
--check) check=1 ;;
*)
    echo "usage: scripts/format.sh [--check]" >&2
    exit 2
    ;;
esac

if ! command -v clang-format >/dev/null 2>&1; then
    "$root/scripts/apt-install.sh" clang-format || exit 1
fi

cd "$root"
dirs=()
for d in include src tests bench tools examples scripts/foreign; do
    [ -d "$d" ] && dirs+=("$d")
done
mapfile -t files < <(find "${dirs[@]}" -type f \( -name '*.c' -o -name '*.h' \) | sort)
[ "${#files[@]}" -gt 0 ] || exit 0

if [ "$check" = 0 ]; then
    clang-format -i --style=file "${files[@]}"
    exit 0
fi

bad=0
for f in "${files[@]}"; do
    if ! clang-format --style=file --dry-run --Werror "$f" >/dev/null 2>&1; then
        echo "not formatted: $f (see: clang-format $f | diff $f -)"
        bad=$((bad + 1))
    fi
done
if [ "$bad" -gt 0 ]; then
    echo "format.sh: $bad of ${#files[@]} files need ./scripts/format.sh"
    exit 1
fi
echo "format.sh: all ${#files[@]} files formatted"
