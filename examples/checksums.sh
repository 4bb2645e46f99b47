#!/bin/sh
# sha256sum of many files in parallel, as command tasks, output in input order
# (like `parallel -k sha256sum`):
#   examples/checksums.sh FILE...
set -eu
[ $# -gt 0 ] || { echo "usage: $0 FILE..." >&2; exit 2; }
list=$(mktemp)
trap 'rm -f "$list"' EXIT
for f in "$@"; do readlink -f "$f"; done >"$list"
${SPARKCTL:-sparkctl} submit --name checksums --command 'sha256sum {}' --inputs "$list"
