#!/usr/bin/env bash
# A driver with a driver.state_dir is killed (SIGKILL) or stopped (SIGTERM)
# in the middle of a job and started again: it takes its application back
# under the same id, the executors keep their units and processes and
# register again, the job goes on, and `sparkctl results` gives every
# task's result exactly once.
# shellcheck source=tests/harness/lib.sh
. "$(dirname "$0")/../harness/lib.sh"
require_user_manager

tmp=$(harness_tmpdir)
require_task_lib

restart_driver_conf durable-test --state-dir
stop_user_units_on_exit 'spark-executor-*'

sparkctl() { "$SPARK_BUILD/sparkctl" --master "ipc://$tmp/master.sock" --driver "$(driver_url durable-test)" "$@"; }
units() { executor_unit_pids; }
job_running() { sparkctl jobs | grep -E "^job-[0-9]+ +$1 +running" | grep -Eq ' [1-9][0-9]*/2000 '; }
reregistered() { [ "$(logged EXECUTOR_REGISTERED driver)" -ge 4 ]; }

real_cluster 2 --master 'worker_timeout_ms = 5000;'
start_real_driver durable-test driver
check "four executor units start" wait_until 30 executor_units_running 4
check "the four register with the driver" wait_until 30 reregistered
app=$(sparkctl status --json | jq -r '.apps[0].app_id')
units_before=$(units)

square_inputs 2000

# restart_during_job NAME SIGNAL: a job of 2,000 tasks; the driver gets
# SIGNAL mid-job and is started again.
restart_during_job() {
        local name=$1 sig=$2 rc=0 job
        job=$(sparkctl submit --detach --name "$name" --function "$lib:slow_square" --inputs "$tmp/numbers") || rc=$?
        check_eq "$name: the job is submitted" 0 "$rc"
        check "$name: the job is under way" wait_until 20 job_running "$name"
        stop_daemon driver "$sig" || true
        mv "$(daemon_log driver)" "$tmp/driver-before-$name.log"
        check "$name: the driver kept its application" \
                bash -c "! grep -q 'unregistered' '$tmp/driver-before-$name.log'"
        start_real_driver durable-test driver
        check "$name: the driver restored its journal" wait_for grep -q "Restored from .*application $app" \
                "$(daemon_log driver)"
        check "$name: the executors register with it again" wait_until 30 reregistered
        rc=0
        sparkctl results "$job" --json >"$tmp/$name.json" 2>"$tmp/$name.err" || rc=$?
        check_eq "$name: the job succeeds" 0 "$rc"
        check_square_results "$name" "$tmp/$name.json"
        check_eq "$name: the same executor units and processes run, none added" "$units_before" "$(units)"
        check_eq "$name: the application kept its id" "$app" "$(sparkctl status --json | jq -r '.apps[0].app_id')"
        check_eq "$name: the master knows one application" 1 "$(sparkctl status --json | jq '.apps | length')"
        check_eq "$name: the master registered no other application" 1 "$(logged APP_REGISTERED master)"
}

restart_during_job crash KILL
restart_during_job stop TERM

# the earlier job's results are still there, after two restarts
first=$(sparkctl jobs | awk '/crash/ { print $1 }')
check_eq "a finished job's results stay fetchable" 2000 "$(sparkctl results "$first" --json | grep -c '"task":')"

# kill-app ends the application for good: the journal goes with it
sparkctl kill-app "$app" >/dev/null
check "kill-app stops the driver" wait_until 20 bash -c "! kill -0 $(daemon_pid driver) 2>/dev/null"
check "... and removes its journal" wait_until 5 bash -c "[ ! -e '$tmp/driver-durable-test-state/jobs.journal' ]"
