#!/usr/bin/env bash
# Runs the black-box tests tests/integration/test-*.sh (or those named on the
# command line) against one systemd user manager, each in its own bash with a
# time limit, and prints one closing line that counts them.
#
# As root, the manager is a private one (tests/harness/usermgr.sh).  A user
# with a running `systemd --user` session may use it instead with
# SPARK_TEST_USE_SESSION=1.
#
#   SPARK_BUILD          build dir with the programs (default: build/)
#   SPARK_TEST_TIMEOUT   seconds per test (default 300)
#   SPARK_NO_ZOOKEEPER=1 no ZooKeeper ensemble: the tests that need one skip
set -u
cd "$(dirname "$0")/.." || exit 1
: "${SPARK_BUILD:=$PWD/build}"
# shellcheck source=tests/harness/build-dir.sh
. tests/harness/build-dir.sh
build_given=$SPARK_BUILD
SPARK_BUILD=$(usable_build_dir "$SPARK_BUILD") || { echo "error: cannot use $build_given" >&2; exit 1; }
export SPARK_BUILD
TEST_TIMEOUT=${SPARK_TEST_TIMEOUT:-300}

passed=0 failed=0 skipped=0 failed_names=() harness_dir='' current='' zk_dir=''

if [ $# -gt 0 ]; then
        tests=()
        for t in "$@"; do
                case $t in
                */*) tests+=("$t") ;;
                *) tests+=("tests/integration/${t%.sh}.sh") ;;
                esac
        done
else
        mapfile -t tests < <(find tests/integration -maxdepth 1 -name 'test-*.sh' -type f | LC_ALL=C sort)
fi
if [ ${#tests[@]} -eq 0 ]; then
        echo "note: no integration tests in tests/integration"
        echo "integration tests: 0 passed, 0 failed"
        exit 0
fi

finish() {
        local rc=$?
        trap - EXIT INT TERM
        if [ -n "$current" ]; then
                kill -TERM "$current" 2>/dev/null
                wait "$current" 2>/dev/null
        fi
        if [ -n "$harness_dir" ]; then
                tests/harness/usermgr.sh stop "$harness_dir"
                rm -rf "$harness_dir"
        fi
        [ -z "$zk_dir" ] || tests/harness/zk.sh stop "$zk_dir"
        [ "$SPARK_BUILD" = "$(realpath "$build_given")" ] || rm -rf "$SPARK_BUILD"
        exit $rc
}
trap finish EXIT
trap 'echo "interrupted"; exit 130' INT
trap 'echo "terminated"; exit 143' TERM

manager_answers() {
        case $(timeout 5 systemctl --user show -p SystemState --value 2>/dev/null) in
        running|degraded) return 0 ;;
        *) return 1 ;;
        esac
}

if [ "${SPARK_TEST_USE_SESSION:-0}" = 1 ] && manager_answers; then
        echo "using the session's user manager (XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-})"
        : "${DBUS_SESSION_BUS_ADDRESS:=unix:path=$XDG_RUNTIME_DIR/bus}"
        export DBUS_SESSION_BUS_ADDRESS
elif [ "$(id -u)" != 0 ]; then
        echo "error: a private user manager needs root; as a user with a running" \
                "systemd --user session, set SPARK_TEST_USE_SESSION=1" >&2
        echo "integration tests: 0 passed, ${#tests[@]} failed"
        exit 1
else
        harness_dir=$(mktemp -d /tmp/spark-harness.XXXXXX)
        if ! tests/harness/usermgr.sh start "$harness_dir"; then
                echo "error: the test user manager did not start" >&2
                echo "integration tests: 0 passed, ${#tests[@]} failed"
                exit 1
        fi
        # shellcheck disable=SC1091
        . "$harness_dir/env"
fi

# One ZooKeeper ensemble for the whole run, if a test asks for it
# (require_zookeeper): three JVMs are too heavy to start per test.
# SPARK_NO_ZOOKEEPER=1: none (CI's sanitizer pass); those tests skip.
if [ "${SPARK_NO_ZOOKEEPER:-0}" != 1 ] && grep -l 'require_zookeeper' "${tests[@]}" >/dev/null 2>&1; then
        : "${SPARK_TEST_ROOT:=/var/lib/spark-test}"
        mkdir -p "$SPARK_TEST_ROOT"
        zk_dir=$(mktemp -d "$SPARK_TEST_ROOT/zk.XXXXXX")
        zk_start=$SECONDS
        if tests/harness/zk.sh start "$zk_dir"; then
                # shellcheck disable=SC1091
                . "$zk_dir/env"
                echo "ZooKeeper ensemble at $ZK_CONNECT (up in $((SECONDS - zk_start)) s)"
        else
                echo "warning: the ZooKeeper ensemble did not start; the tests that need it skip" >&2
        fi
fi

# Units a test left behind would disturb the next one: report and stop them.
# The manager's own units (dbus, sockets, slices, targets) are not the tests'.
leftover_units() {
        systemctl --user list-units --state=active,activating,deactivating,failed --plain --no-legend \
                --type=service,scope 2>/dev/null | awk '$1 != "dbus.service" && $1 != "init.scope" { print $1 }'
}

for t in "${tests[@]}"; do
        name=$(basename "$t" .sh)
        echo "=== $name"
        if [ ! -f "$t" ]; then
                echo "--- $name: FAIL (no such test)"
                failed=$((failed + 1)) failed_names+=("$name")
                continue
        fi
        start=$(date +%s)
        timeout --kill-after=15 "$TEST_TIMEOUT" bash "$t" </dev/null &
        current=$!
        wait "$current"
        rc=$?
        current=''
        secs=$(($(date +%s) - start))
        case $rc in
        0) echo "--- $name: PASS (${secs}s)"; passed=$((passed + 1)) ;;
        77) echo "--- $name: SKIP"; skipped=$((skipped + 1)) ;;
        124|137) echo "--- $name: FAIL (timed out after ${TEST_TIMEOUT}s)" ;;
        *) echo "--- $name: FAIL (exit status $rc, ${secs}s)" ;;
        esac
        case $rc in 0|77) ;; *) failed=$((failed + 1)) failed_names+=("$name") ;; esac

        left=$(leftover_units | tr '\n' ' ')
        if [ -n "$left" ]; then
                echo "warning: $name left units behind, stopping them: $left"
                # shellcheck disable=SC2086
                timeout 30 systemctl --user stop $left >/dev/null 2>&1
                # shellcheck disable=SC2086
                timeout 10 systemctl --user reset-failed $left >/dev/null 2>&1
        fi
        if ! manager_answers; then
                echo "error: the user manager stopped answering after $name" >&2
        fi
done

[ "$skipped" -eq 0 ] || echo "skipped: $skipped"
[ "$failed" -eq 0 ] || echo "failed: ${failed_names[*]}"
echo "integration tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
