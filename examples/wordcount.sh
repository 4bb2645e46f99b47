#!/bin/sh
# Word count over files as command tasks, one task per file:
#   examples/wordcount.sh FILE...
# Each task runs `wc -w` on its file on some executor; the totals are added here.
set -eu
[ $# -gt 0 ] || { echo "usage: $0 FILE..." >&2; exit 2; }
list=$(mktemp)
trap 'rm -f "$list"' EXIT
for f in "$@"; do readlink -f "$f"; done >"$list"
${SPARKCTL:-sparkctl} submit --name wordcount --command 'wc -w < {}' --inputs "$list" |
        awk '{ total += $1 } END { printf "%d words in %d files\n", total, NR }'
