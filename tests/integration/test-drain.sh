#!/usr/bin/env bash
# sparkctl drain: a worker is emptied in the middle of a job without losing
# or repeating anything.  A master, a driver and two workers of 2 cores on
# the test's systemd user manager; the application has 2 executors of 1
# core, one on each worker (spread out), and task_max_failures = 1, so that
# a single failed attempt would fail its job.
#
#  1. A job of 5,000 command tasks runs; worker 1 is drained in its middle.
#     Its executor finishes what it holds, is given nothing more, is stopped
#     once idle and replaced on worker 2; worker 1 shows DRAINING, then
#     DRAINED in sparkctl status (and --json).  The job succeeds with every
#     task's output exactly once, each from its first attempt.
#  2. undrain: worker 1 is ALIVE again.
#  3. drain --timeout 1 of worker 2 while its executors run tasks of 4 s:
#     at the timeout they are stopped, the tasks run again on replacements
#     on worker 1, and the job still succeeds (a re-queue at the drain
#     timeout is no failure).
# shellcheck source=tests/harness/lib.sh
. "$(dirname "$0")/../harness/lib.sh"
require_real_cluster

T=$(harness_tmpdir)
SPARKCTL=$SPARK_BUILD/sparkctl

sparkctl_driver_conf drain-test 'max_cores = 2; cores_per_executor = 1; executor_memory_mb = 256; task_max_failures = 1;
          locality_wait_ms = 0;'

status_json() {
        "$SPARKCTL" status --json 2>/dev/null
}
# the id of worker N, from its endpoint
worker_id() {
        status_json | jq -r --arg e "ipc://$T/worker$1.sock" '.workers[] | select(.endpoint == $e) | .worker_id'
}
worker_state() {
        status_json | jq -r --arg w "$1" '.workers[] | select(.worker_id == $w) | .state'
}
worker_is() {
        [ "$(worker_state "$1")" = "$2" ]
}
# live executors of the app on worker W
executors_on() {
        status_json | jq -r --arg w "$1" '[.executors[] | select(.worker_id == $w)] | length'
}
executors_on_are() {
        [ "$(executors_on "$1")" = "$2" ]
}
# tasks done by the job named N, from the driver
job_done() {
        "$SPARKCTL" jobs --json 2>/dev/null | jq -r --arg n "$1" '[.jobs[] | select(.name == $n) | .done] | max // 0'
}
job_started() {
        [ "$(job_done "$1")" -ge "$2" ]
}

stop_user_units_on_exit 'spark-executor-*'
real_cluster 2 --memory-mb 1024 --master 'spread_out = true;'
check "both workers register" wait_for eval '[ -n "$(worker_id 1)" ] && [ -n "$(worker_id 2)" ]'
w1=$(worker_id 1)
w2=$(worker_id 2)
start_real_driver drain-test driver
check "the driver registers its application" wait_for app_registered
check "one executor on each worker" wait_until 30 eval 'executors_on_are "$w1" 1 && executors_on_are "$w2" 1'
check "both executors register with the driver" wait_until 30 executor_registered 2

# --- 1. drain in the middle of a 5,000-task job
"$SPARKCTL" submit --name big --json --command 'echo {#}' --count 5000 >"$T/big.out" 2>"$T/big.err" &
submit=$!
check "the job is under way" wait_until 60 job_started big 200
check "sparkctl drain succeeds" "$SPARKCTL" drain "$w1"
state=$(worker_state "$w1")
check_match "worker 1 is draining (or drained already)" '^(draining|drained)$' "$state"
check "worker 1 becomes DRAINED" wait_until 60 worker_is "$w1" drained
check_eq "... with no executor left there" 0 "$(executors_on "$w1")"
check "its executor is replaced on worker 2" wait_until 30 executors_on_are "$w2" 2
# (the table shortens a worker id to its HOST-PORT: worker-YYYYMMDDhhmmss- off)
check_match "sparkctl status shows DRAINED" "^${w1#worker-[0-9]*-} .*drained" "$("$SPARKCTL" status 2>&1)"
rc=0
wait "$submit" || rc=$?
check_eq "the job succeeds" 0 "$rc"
check_eq "5,000 results" 5000 "$(wc -l <"$T/big.out")"
check_eq "each task once, in order, with its own output" \
        "$(seq 0 4999 | awk '{ printf "%s %s\n", $1, $1 }')" \
        "$(jq -r '"\(.task) \(.output | rtrimstr("\n"))"' "$T/big.out")"
check_eq "no task failed or ran twice" "" "$(jq -c 'select(.status != "ok" or .attempts != 1)' "$T/big.out")"
check "the driver released the idle executor" grep -q "on worker $w1, drained (its worker drains, or fair share takes it back), is idle: released" "$(daemon_log driver)"
check "the master logged the drain" grep -q "Worker $w1 drained" "$(daemon_log master)"

# a resent or repeated drain changes nothing; an unknown worker is an error
check "draining a drained worker again succeeds" "$SPARKCTL" drain "$w1"
check_eq "... and it stays drained" drained "$(worker_state "$w1")"
rc=0
"$SPARKCTL" drain worker-nosuch-0000 2>"$T/nosuch.err" || rc=$?
check_eq "draining an unknown worker fails (exit 1)" 1 "$rc"
check "... saying so" grep -q "unknown worker" "$T/nosuch.err"
rc=0
"$SPARKCTL" drain "$w1" --timeout 0 2>/dev/null || rc=$?
check_eq "a timeout of 0 s is a usage error" 2 "$rc"

# --- 2. undrain
check "sparkctl undrain succeeds" "$SPARKCTL" undrain "$w1"
check_eq "worker 1 is alive again" alive "$(worker_state "$w1")"

# --- 3. drain with a timeout under tasks that outlast it
"$SPARKCTL" submit --name long --json --command 'sleep 4; echo {#}' --count 2 >"$T/long.out" 2>"$T/long.err" &
submit=$!
running_two() {
        [ "$("$SPARKCTL" jobs --json 2>/dev/null | jq -r '[.jobs[] | select(.name == "long") | .running] | max // 0')" = 2 ]
}
check "two long tasks run on worker 2" wait_until 30 running_two
check "sparkctl drain --timeout 1 succeeds" "$SPARKCTL" drain "$w2" --timeout 1
check "worker 2 becomes DRAINED after the timeout" wait_until 30 worker_is "$w2" drained
check "its executors are replaced on worker 1" wait_until 30 executors_on_are "$w1" 2
rc=0
wait "$submit" || rc=$?
check_eq "the job succeeds: a re-queue at the drain timeout is no failure" 0 "$rc"
check_eq "both results, from a second attempt" '0 ok 2
1 ok 2' "$(jq -r '"\(.output | rtrimstr("\n")) \(.status) \(.attempts)"' "$T/long.out")"
check "the driver did not count the re-queued tasks" grep -q "drained: not counted as failures" "$(daemon_log driver)"
check_match "status --json shows DRAINED" '"state":"drained"' "$(status_json)"
