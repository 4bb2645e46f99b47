#!/usr/bin/env bash
# Runs every libcheck unit test binary given on the command line from the
# source root (tests read their data files by relative path) and prints one
# closing line that counts them.
set -u
cd "$(dirname "$0")/.."
passed=0 failed=0 skipped=0 failed_names=()

# The tests of the zookeeper recovery mode (test-zk-*) share one ensemble
# (tests/harness/zk.sh), started here only if one of them is to run and
# SPARK_NO_ZOOKEEPER is not 1 (they skip then).
zk_dir=''
stop_zk() { [ -z "$zk_dir" ] || tests/harness/zk.sh stop "$zk_dir"; }
trap stop_zk EXIT
case " $* " in
*/test-zk-*)
        # SPARK_NO_ZOOKEEPER=1: not in this run (CI's sanitizer pass)
        if [ -z "${ZK_CONNECT:-}" ] && [ "${SPARK_NO_ZOOKEEPER:-0}" != 1 ]; then
                root=${SPARK_TEST_ROOT:-/var/lib/spark-test}
                mkdir -p "$root" && zk_dir=$(mktemp -d "$root/zk-unit.XXXXXX") &&
                        tests/harness/zk.sh start "$zk_dir" && . "$zk_dir/env" ||
                        echo "warning: no ZooKeeper ensemble: the test-zk-* tests skip" >&2
        fi
        ;;
esac
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
