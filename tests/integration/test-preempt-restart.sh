#!/usr/bin/env bash
# Fair share's preemption takes the least busy executors first, and a
# master restart in the middle of it goes on where it was
# (docs/DESIGN.md "Fair share").  Two workers of 4 cores; the master has
# scheduling "fair" and a preemption timeout of 8 s.
#
#  1. A (task_max_failures = 1) gets all 8 executors and runs 5 tasks that
#     hold their executors until the test lets them end: 3 executors run
#     no task, and A's driver reports each executor's running tasks.
#  2. B comes; a timeout later the master takes 4 executors back from A:
#     the 3 idle ones first, which A's driver releases at once, and one
#     busy one, which it cannot release before its task ends.
#  3. The master restarts while that one is still being taken back: it
#     restores it as such (sparkctl status shows it) and takes nothing more
#     back.  The test lets the tasks end: A's driver releases it, the shares
#     are 4 and 4, and every task of A succeeded at its first attempt.
# shellcheck source=tests/harness/lib.sh
. "$(dirname "$0")/../harness/lib.sh"
require_real_cluster

T=$(harness_tmpdir)
SPARKCTL=$SPARK_BUILD/sparkctl
for n in A B; do
        real_driver_conf "$n" 'cores_per_executor = 1; executor_memory_mb = 128; task_max_failures = 1;
          locality_wait_ms = 0;'
done

status_json() {
        "$SPARKCTL" status --json 2>/dev/null
}
# APP FIELD: the field of the live application named APP
app_field() {
        status_json | jq -r --arg n "$1" --arg f "$2" '[.apps[] | select(.name == $n) | .[$f]] | max // 0'
}
held_running() {
        [ "$("$SPARKCTL" --driver "$(driver_url A)" jobs --json 2>/dev/null |
                jq -r '[.jobs[] | select(.name == "held") | .running] | max // 0')" -ge 5 ]
}

stop_user_units_on_exit 'spark-executor-*'
real_cluster 2 --cores 4 --master 'scheduling = "fair"; preemption_timeout_ms = 8000;'

# --- 1. A holds the cluster, 5 of its 8 executors busy
start_real_driver A
check "A's 8 executors register" wait_until 60 eval '[ "$(logged EXECUTOR_REGISTERED driverA)" -ge 8 ]'
"$SPARKCTL" --driver "$(driver_url A)" submit --name held --json --count 5 \
        --command "echo \$SPARK_EXECUTOR_ID; while [ ! -e $T/go ]; do sleep 0.05; done" >"$T/held.out" 2>"$T/held.err" &
held=$!
check "A runs 5 tasks that hold their executors" wait_until 30 held_running
app_a=$(status_json | jq -r '.apps[] | select(.name == "A") | .app_id')
status_json | jq -r --arg a "$app_a" '.executors[] | select(.app_id == $a) | .executor_id' | sort >"$T/a-executors"
check_eq "A holds 8 executors" 8 "$(wc -l <"$T/a-executors")"

# --- 2. B comes: 4 are taken back, the idle ones first
start_real_driver B
check "a timeout later, 4 of A's executors are taken back" \
        wait_until 30 eval '[ "$(logged EXECUTOR_PREEMPTED master)" -ge 4 ]'
grep "id=$(message_id EXECUTOR_PREEMPTED)" "$(daemon_log master)" | sed -n 's/.* executor=\([0-9]*\).*/\1/p' >"$T/taken"
check_eq "... all of them A's" "" "$(head -3 "$T/taken" | sort | comm -13 "$T/a-executors" - | tr '\n' ' ')"

# --- 3. the master restarts while the busy one is being taken back
stop_daemon master TERM
mv "$(daemon_log master)" "$T/master-1.log"
start_daemon master "$SPARK_BUILD/spark-master" --config "$T/cluster.conf"
check "the restarted master restores the executors being taken back" \
        wait_for grep -Eq "Restored [1-4] executors being taken back" "$(daemon_log master)"
check "the busy one is still being taken back once the idle ones are gone" \
        wait_until 20 eval '[ "$(app_field A executors_preempting)" = 1 ] && [ "$(app_field A executors_live)" = 5 ]'
touch "$T/go"
rc=0
wait "$held" || rc=$?
check_eq "A's held job succeeds" 0 "$rc"
check_eq "5 results" 5 "$(wc -l <"$T/held.out")"
check_eq "no task of it failed or ran twice" "" "$(jq -c 'select(.status != "ok" or .attempts != 1)' "$T/held.out")"
jq -r '.output | gsub("[^0-9]"; "")' "$T/held.out" | sort >"$T/busy"
check_eq "the 3 executors that ran no task were the first taken back" \
        "$(comm -23 "$T/a-executors" "$T/busy" | tr '\n' ' ')" "$(head -3 "$T/taken" | sort | tr '\n' ' ')"
check "the shares are 4 and 4, none being taken back" wait_until 30 eval '
        [ "$(app_field A executors_live)" = 4 ] && [ "$(app_field B executors_live)" = 4 ] &&
        [ "$(app_field A executors_preempting)" = 0 ]'
check_eq "the restarted master took nothing more back" 0 "$(logged EXECUTOR_PREEMPTED master)"
check "A's driver released the busy one itself, not stopped at the deadline" \
        eval '! grep -q "not released in time" "$(daemon_log master)" "$T/master-1.log"'

# --- a driver's load report is checked whole, never trusted further
fake_driver=$SPARK_BUILD/tests/helpers/fake-driver
[ -x "$fake_driver" ] || die "test helpers are not built (make test-helpers)"
# load_refused REGEX ARG...: the master answers the report with an Error
# matching REGEX
load_refused() {
        local regex=$1 out rc=0
        shift
        out=$("$fake_driver" --master "$SPARK_MASTER_URL" executor-load "$@" 2>&1) || rc=$?
        [ $rc -eq 1 ] && grep -Eq -- "^fake-driver: error -[0-9]+: .*$regex" <<<"$out" && return 0
        echo "#   executor-load $*: exit $rc: $out"
        return 1
}
check "a report naming an executor not the app's is refused, naming it" \
        load_refused "executor 999 is not one of application $app_a" "$app_a" 1=0 999=1
check "a negative count is refused" load_refused "executor $app_a/2: negative" "$app_a" 1=0 2=-1
check "more entries than the app ever had executors are refused" \
        load_refused "9 entries, more than its executors" "$app_a" 1=0 2=0 3=0 4=0 5=0 6=0 7=0 8=0 1=0
check "a report for an unknown application is refused" \
        load_refused "unknown application" app-20991231000000-9999 1=0
check "a good report is taken (its count clamped to the executor's cores)" \
        quietly "$fake_driver" --master "$SPARK_MASTER_URL" executor-load "$app_a" 1=0 2=1000000
check "the master still answers" quietly "$SPARKCTL" status
