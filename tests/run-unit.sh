#!/usr/bin/env bash
# Runs every libcheck unit test binary given on the command line from the
# source root (tests read their data files by relative path) and prints one
# closing line that counts them.
set -u
cd "$(dirname "$0")/.."
passed=0 failed=0 skipped=0 failed_names=()
for t in "$@"; do
        echo "== $(basename "$t")"
        rc=0
        "$t" || rc=$?
        if [ $rc -eq 0 ]; then
                passed=$((passed + 1))
        elif [ $rc -eq 77 ]; then
                # a test that needs what only the integration runner provides
                # (a systemd user manager) runs there too
                skipped=$((skipped + 1))
        else
                failed=$((failed + 1))
                failed_names+=("$(basename "$t")")
        fi
done
echo "unit test binaries: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] || { echo "failed: ${failed_names[*]}"; exit 1; }
