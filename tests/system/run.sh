#!/usr/bin/env bash
# tests/system/run.sh [TEST...]: the system tests (`make check-system`, as
# root): the packages' contents, then a cluster from the .debs in booted
# systemd containers, on one host and on three (one master, then two on
# ZooKeeper).  Each test prints what it checks ("ok N - ..."); the closing
# line counts every check of every test.
#
# Environment: SPARK_PACKAGES, the directory with the packages (make deb
# and make rpm put them in build/packages); SYSTEM_TEST_TIMEOUT, seconds one
# test may take (default 600).
set -u
cd "$(dirname "$0")/../.."
export SPARK_PACKAGES=${SPARK_PACKAGES:-$PWD/build/packages}
limit=${SYSTEM_TEST_TIMEOUT:-600}

if [ $# -eq 0 ]; then
        set -- tests/system/test-packages.sh tests/system/test-single-host.sh tests/system/test-worker-privilege.sh \
                tests/system/test-executor-sandbox.sh tests/system/test-resource-devices.sh tests/system/test-multi-host.sh \
                tests/system/test-multi-host-ha.sh
fi

log=$(mktemp -d "${TMPDIR:-/tmp}/spark-system-tests.XXXXXX")
trap 'rm -rf "$log"' EXIT
passed=0 failed=0 skipped=0 broken=()

# What a test killed by the time limit could not tear down itself: its
# containers (found by their overlay's path), their overlays, its bridge.
sweep() {
        local pid cmd m
        for pid in $(pgrep -x systemd-nspawn); do
                cmd=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || continue
                case $cmd in *--directory=*/spark-test-*-host.*/ct-*) kill -KILL "$pid" 2>/dev/null ;; esac
        done
        sleep 1
        for m in $(findmnt -rn -o TARGET -t overlay | grep -E '/spark-test-[a-z-]+-host\.[^/]+/ct-[^/]+/root$'); do
                umount "$m" 2>/dev/null || umount -l "$m"
        done
        for b in $(ip -o link show type bridge 2>/dev/null | awk -F': ' '{ print $2 }' | grep -E '^spkbr[0-9]+$'); do
                ip link del "$b" 2>/dev/null
        done
}

t0=$SECONDS
for t in "$@"; do
        name=$(basename "$t" .sh)
        echo "=== $name"
        timeout -k 30 "$limit" "$t" 2>&1 | tee "$log/$name.log"
        rc=${PIPESTATUS[0]}
        p=$(grep -c '^ok ' "$log/$name.log")
        f=$(grep -c '^not ok ' "$log/$name.log")
        passed=$((passed + p))
        failed=$((failed + f))
        case $rc in
        0) ;;
        77) skipped=$((skipped + 1)) ;;
        124 | 137)
                echo "# $name: stopped after ${limit}s"
                sweep
                failed=$((failed + 1))
                broken+=("$name (timed out)")
                ;;
        *) [ "$f" -gt 0 ] || { failed=$((failed + 1)); broken+=("$name (exit $rc)"); } ;;
        esac
        [ "$f" -eq 0 ] || broken+=("$name")
done

echo
echo "=== system tests, $((SECONDS - t0)) s"
for t in "$@"; do
        name=$(basename "$t" .sh)
        echo "  $name: $(grep -c '^ok ' "$log/$name.log") passed, $(grep -c '^not ok ' "$log/$name.log") failed"
done
[ ${#broken[@]} -eq 0 ] || echo "failed: ${broken[*]}"
# one word before the counts: the form CI reads
echo "system-tests: $passed passed, $failed failed$([ $skipped -eq 0 ] || echo ", $skipped skipped")"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
