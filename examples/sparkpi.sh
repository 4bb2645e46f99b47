#!/bin/sh
# Estimates π with SparkPi on a running cluster:
#   examples/sparkpi.sh [TASKS [DARTS_PER_TASK]]
# Needs sparkctl and sparkpi.so (make builds build/examples/sparkpi.so).
set -eu
tasks=${1:-100}
darts=${2:-1000000}
lib=${SPARKPI_LIB:-$(dirname "$0")/../build/examples/sparkpi.so}
${SPARKCTL:-sparkctl} submit --name sparkpi --function "$lib:sparkpi" --count "$tasks" --arg "$darts" |
        awk '{ inside += $1; thrown += $2 } END { if (thrown == 0) exit 1; printf "Pi is roughly %.6f (%d darts)\n", 4 * inside / thrown, thrown }'
