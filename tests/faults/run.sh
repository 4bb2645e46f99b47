#!/usr/bin/env bash
# The fault-injection suite (`make check-faults`, docs/DESIGN.md §9): for each
# scenario (tests/faults/scenarios.sh: SIGKILL and SIGSTOP of an executor,
# of a worker, of a worker with its executors, SIGKILL of the master and of
# the driver, a byte flipped in the master's journal, MemoryMax, a full work_dir, a worker cut off by its network
# namespace; with ZooKeeper: the leader killed, one or two of its nodes
# down, a rolling restart, the leader partitioned), a fresh cluster — a master, two workers (systemd_bus = "user")
# and a driver on a private systemd user manager (tests/harness/usermgr.sh)
# — runs 5,000 tasks (2,500 command tasks and 2,500 function tasks, as two
# jobs at once) while one fault is injected.  Then: every result arrived
# exactly once and right (or, for the driver's death, sparkctl failed
# clearly), every daemon still answers, and once the driver is stopped no
# spark-executor unit or process is left.  Prints a table and
#   fault scenarios: N passed, M failed
# and exits non-zero if any failed.  Everything it made (daemons, units, the
# network namespace, veth, tmpfs mounts, the manager) is removed on exit.
#
#   tests/faults/run.sh [SCENARIO...]      (root; default: all, in order)
#   SPARK_BUILD       build dir (default build/)
#   SPARK_FAULTS_KEEP=1  keep the temp dir (kept anyway when a scenario fails)
set -u
cd "$(dirname "$0")/../.." || exit 1
SPARK_SRC=$PWD
: "${SPARK_BUILD:=$SPARK_SRC/build}"
# shellcheck source=tests/harness/build-dir.sh
. "$SPARK_SRC/tests/harness/build-dir.sh"
build_given=$SPARK_BUILD
SPARK_BUILD=$(usable_build_dir "$SPARK_BUILD") || { echo "cannot use $build_given" >&2; exit 1; }
export SPARK_BUILD
STAMP=$SPARK_BUILD/tests/faults/fault-stamp
TASK_LIB=$SPARK_BUILD/tests/helpers/tasks/spark-fault-tasks.so

# The cluster's knobs: short timeouts, so that faults are found in seconds.
WORKER_TIMEOUT_MS=2000
WORKER_HEARTBEAT_MS=200
EXECUTOR_HEARTBEAT_TIMEOUT_MS=1500
DRIVER_RECONNECT_MS=3000 # a lost driver's app is removed after this
WORKER_CORES=4
APP_CORES=4              # 4 executors of 1 core: two per worker, room for 2 more on each
EXECUTOR_MEMORY_MB=128
TASK_MAX_FAILURES=4
TASK_MS=8                # a task's sleep (function tasks in C, command tasks with sleep(1))
CMD_TASKS=2500
FN_TASKS=2500
UNDER_WAY=600            # results written before the fault is injected
JOB_TIMEOUT_S=180

# shellcheck source=tests/faults/lib.sh
. tests/faults/lib.sh
# shellcheck source=tests/faults/scenarios.sh
. tests/faults/scenarios.sh

fatal() {
        echo "check-faults: $*" >&2
        echo "fault scenarios: 0 passed, ${#SELECTED[@]} failed"
        exit 1
}

SELECTED=("$@")
[ ${#SELECTED[@]} -gt 0 ] || SELECTED=("${SCENARIOS[@]}")
for s in "${SELECTED[@]}"; do
        declare -F "inject_$s" >/dev/null || fatal "no scenario '$s' (scenarios: ${SCENARIOS[*]} ${EXTRA_SCENARIOS[*]})"
done
[ "$(id -u)" = 0 ] || fatal "needs root (a private user manager, network namespaces, tmpfs mounts)"
for p in spark-master spark-worker spark-driver spark-executor sparkctl; do
        [ -x "$SPARK_BUILD/$p" ] || fatal "no $SPARK_BUILD/$p: run make all test-helpers"
done
[ -x "$STAMP" ] || fatal "no $STAMP: run make check-faults"
[ -f "$TASK_LIB" ] || fatal "no $TASK_LIB: run make test-helpers"
for c in jq ip nsenter ss mount systemctl; do
        command -v "$c" >/dev/null || fatal "$c is not installed"
done

# Not under /tmp: executors run with PrivateTmp= and must see their work
# dirs, task libraries and the driver's ipc:// socket.
mkdir -p "${SPARK_TEST_ROOT:=/var/lib/spark-test}"
T=$(mktemp -d "$SPARK_TEST_ROOT/faults.XXXXXX")
HARNESS=$T/harness
PORTS_GIVEN_FILE=$T/ports-given
# shellcheck source=tests/harness/free-port.sh
. tests/harness/free-port.sh
mkdir -p "$HARNESS"
ROWS=()
FAILED_NAMES=()
FAIL_LINES=()
n_passed=0 n_failed=0
S=$T
SCENARIO=setup
SUBMIT_CMD='' SUBMIT_FN=''

# --- teardown, whatever happens ------------------------------------------------------

stop_all_units() {
        timeout 30 systemctl --user stop 'spark-executor-*' >/dev/null 2>&1 || true
        timeout 10 systemctl --user reset-failed 'spark-executor-*' >/dev/null 2>&1 || true
}

teardown() {
        local rc=$?
        trap - EXIT INT TERM
        [ -z "$SUBMIT_CMD" ] || kill -TERM "$SUBMIT_CMD" 2>/dev/null
        [ -z "$SUBMIT_FN" ] || kill -TERM "$SUBMIT_FN" 2>/dev/null
        daemons_stop_all
        [ -z "${XDG_RUNTIME_DIR:-}" ] || stop_all_units
        # the manager first: its mount namespace holds the tmpfs too
        tests/harness/usermgr.sh stop "$HARNESS" >/dev/null 2>&1 || true
        tmpfs_teardown
        netns_teardown
        [ -z "${ZK_DIR:-}" ] || tests/harness/zk.sh stop "$ZK_DIR" >/dev/null 2>&1
        [ "$SPARK_BUILD" = "$(realpath "$build_given")" ] || rm -rf "$SPARK_BUILD"
        if [ $n_failed -gt 0 ] || [ $rc -ne 0 ] || [ "${SPARK_FAULTS_KEEP:-0}" = 1 ]; then
                echo "# kept $T"
        else
                rm -rf "$T"
        fi
        exit $rc
}
trap teardown EXIT
trap 'echo "interrupted"; exit 130' INT
trap 'echo "terminated"; exit 143' TERM

netns_setup || fatal "cannot set up the network namespace"

# The HA scenarios' ZooKeeper ensemble: one for the whole run, on the veth
# pair's host side, so that a master in the namespace reaches it too
# (ha-partition).
ZK_DIR=''
ZK_SESSION_TIMEOUT_MS=2000
case " ${SELECTED[*]} " in
*" ha-"*)
        ZK_DIR=$T/zk
        ZK_CLIENT_HOST=$HOST_IP tests/harness/zk.sh start "$ZK_DIR" || fatal "the ZooKeeper ensemble did not start"
        # shellcheck disable=SC1091
        . "$ZK_DIR/env"
        ;;
esac

tmpfs_setup || fatal "cannot mount a tmpfs on $T/tmpfs"
tests/harness/usermgr.sh start "$HARNESS" || fatal "the systemd user manager did not start"
# shellcheck disable=SC1091
. "$HARNESS/env"

# --- one scenario ---------------------------------------------------------------------

# after_jobs: the checks once the jobs ended; sets LEAKS.
after_jobs() {
        local stray n rc=0
        every_daemon_answers "$([ "$EXPECT_FAILURE" = 1 ] || echo driver)"
        if [ "$EXPECT_FAILURE" != 1 ]; then
                if ! wait_until 15 units_match_master; then
                        stray=$(stray_units | tr '\n' ' ')
                        n=$(wc -w <<<"$stray")
                        LEAKS=$((LEAKS + n))
                        problem "units and the master's running executors differ; $n stray: ${stray:-none} (master: $(executors "$APP" | tr '\n' ','))"
                fi
                if [ "$DRIVER_STATE" = 1 ]; then
                        # a driver with a state_dir keeps its application on
                        # SIGTERM; kill-app ends it for good
                        sparkctl kill-app "$APP" >/dev/null 2>&1 || problem "sparkctl kill-app $APP failed"
                        wait_until 20 eval '! daemon_alive driver' || problem "the driver still runs after kill-app"
                        daemon_stop driver TERM || true
                        [ ! -e "$S/driver-state/jobs.journal" ] || problem "kill-app left the driver's journal"
                else
                        daemon_stop driver TERM || rc=$?
                        [ $rc -eq 0 ] || problem "the driver exited with status $rc on SIGTERM"
                fi
        fi
        if ! wait_until 30 no_units_left; then
                n=$(($(n_of units) + $(n_of executor_pids)))
                LEAKS=$((LEAKS + n))
                problem "after the app ended: units left: $(units | tr '\n' ' ') executor pids left: $(executor_pids | tr '\n' ' ')"
        fi
        if ! wait_until 15 master_forgot_app; then
                n=$(executors "$APP" | grep -cE ' (running|launching)$') || true
                LEAKS=$((LEAKS + n))
                problem "the master still holds the app or its executors: $(executors "$APP" | tr '\n' ',')"
        fi
        every_daemon_answers
}

verify_jobs() {
        local job rc first n r lost dup retried
        LOST=0 DUPS=0 RETRIED=0
        for job in cmd fn; do
                if [ $job = cmd ]; then rc=$RC_CMD first=0 n=$CMD_TASKS; else rc=$RC_FN first=$CMD_TASKS n=$FN_TASKS; fi
                read -r lost dup retried <<<"$(check_results "$S/$job.json" "$first" "$n")"
                LOST=$((LOST + lost)) DUPS=$((DUPS + dup)) RETRIED=$((RETRIED + retried))
                if [ "$EXPECT_FAILURE" = 1 ]; then
                        # sparkctl(1): exit 3, a daemon unreachable
                        if [ "$rc" -ne 3 ] || ! grep -qE '^sparkctl: cannot reach the driver' "$S/$job.err"; then
                                problem "the $job job: exit $rc, not 3 with \"cannot reach the driver\": $(tail -n 2 "$S/$job.err" | tr '\n' ' ')"
                        else
                                log "$job job: exit $rc: $(grep -E '^sparkctl: ' "$S/$job.err" | tail -n 1)"
                        fi
                        # what did arrive must be right and once
                        r=$(jq -r 'select(.status == "ok") | "\(.task) \(.output | rtrimstr("\n"))"' "$S/$job.json" 2>/dev/null |
                                awk -v f="$first" '$2 != ($1 + f) * ($1 + f) { bad++ } END { print bad + 0 }')
                        [ "$r" -eq 0 ] || problem "$r wrong results in the $job job's partial output"
                        continue
                fi
                [ "$rc" -eq 0 ] || problem "the $job job: sparkctl exit $rc: $(tail -n 3 "$S/$job.err" | tr '\n' ' ')"
                [ "$lost" -eq 0 ] || problem "the $job job: $lost of $n results missing, failed or wrong"
                [ "$dup" -eq 0 ] || problem "the $job job: $dup duplicate results"
        done
        if [ "$EXPECT_FAILURE" = 1 ]; then
                LOST=n/a
        fi
}

run_scenario() {
        local t_start name=$1
        SCENARIO=$name
        S=$T/$name
        mkdir -p "$S"
        PROBLEMS=()
        DETECT_MS=- DETECT_WHAT='-' EXPECT_FAILURE=0 HOG_TASKS='' HA=0 M_NETNS=0 MASTER_EXTRA='' DRIVER_STATE=0
        LOST=- DUPS=- RETRIED=- LEAKS=0
        W_NETNS=() W_TMPFS=() WID=() APP=''
        t_start=$(date +%s)
        echo "=== $name"
        if declare -F "setup_$name" >/dev/null; then "setup_$name"; fi

        if cluster_up; then
                jobs_submit
                if wait_until 60 jobs_under_way "$UNDER_WAY"; then
                        "inject_$name"
                else
                        problem "the jobs did not get under way: $(cat "$S"/*.err 2>/dev/null | tail -n 3 | tr '\n' ' ')"
                fi
                jobs_wait "$JOB_TIMEOUT_S"
                [ "$RC_CMD" != 124 ] && [ "$RC_FN" != 124 ] || problem "the jobs did not end within ${JOB_TIMEOUT_S}s"
                verify_jobs
                after_jobs
        fi

        # daemons that died on their own are a failure too
        local d
        for d in master master2 w1 w2 driver; do
                if [ -n "${DPID[$d]:-}" ] && ! daemon_alive "$d"; then
                        local st=0
                        daemon_reap "$d" || st=$?
                        problem "$d died (status $st): $(grep -vE '^[0-9]+ =====' "$S/$d.log" | tail -n 2 | tr '\n' ' ')"
                fi
        done
        # each exits 0 on SIGTERM (the sanitizer build: no leak, no error)
        for d in driver w1 w2 master master2; do
                local st=0
                [ -n "${DPID[$d]:-}" ] || continue
                daemon_stop "$d" || st=$?
                [ $st -eq 0 ] || problem "$d exited with status $st on SIGTERM: $(grep -E 'Sanitizer|runtime error' "$S/$d.log" | head -n 1)"
        done
        daemons_stop_all
        if [ -n "$(units)" ]; then
                LEAKS=$((LEAKS + $(n_of units)))
                problem "units left after the cluster stopped: $(units | tr '\n' ' ')"
                stop_all_units
        fi
        tmpfs_clear
        ip -n "$NETNS" link set "$VETH_NS" up 2>/dev/null || true
        netns_heal

        local verdict=PASS
        if [ ${#PROBLEMS[@]} -gt 0 ]; then
                verdict=FAIL
                n_failed=$((n_failed + 1))
                FAILED_NAMES+=("$name")
                local p
                for p in "${PROBLEMS[@]}"; do
                        FAIL_LINES+=("$name: $p")
                done
        else
                n_passed=$((n_passed + 1))
        fi
        ROWS+=("$name|$DETECT_MS|$RETRIED|$LOST|$DUPS|$LEAKS|$verdict|$DETECT_WHAT")
        echo "--- $name: $verdict ($(($(date +%s) - t_start)) s)"
}

for s in "${SELECTED[@]}"; do
        run_scenario "$s"
done

# --- the table ----------------------------------------------------------------------------

echo
printf '%-14s | %9s | %7s | %4s | %4s | %5s | %-4s | %s\n' scenario "detect ms" retried lost dup leaks "" "detected (timed from the fault)"
printf '%s\n' "---------------+-----------+---------+------+------+-------+------+---------------------------------"
for row in "${ROWS[@]}"; do
        IFS='|' read -r name det ret lost dup leaks verdict what <<<"$row"
        printf '%-14s | %9s | %7s | %4s | %4s | %5s | %-4s | %s\n' "$name" "$det" "$ret" "$lost" "$dup" "$leaks" "$verdict" "$what"
done
echo
if [ $n_failed -gt 0 ]; then
        printf '%s\n' "${FAIL_LINES[@]}" | sed 's/^/why: /'
        echo "failed: ${FAILED_NAMES[*]} (logs kept in $T)"
fi
echo "fault scenarios: $n_passed passed, $n_failed failed"
[ $n_failed -eq 0 ]
