#!/usr/bin/env bash
# The driver as a service of the (private) user manager, with the packaged
# unit's service settings (Type=notify, WatchdogSec=, Restart=on-failure,
# RestartPreventExitStatus=78 79) and a driver.state_dir; `systemctl --user
# restart` of it in the middle of a job: the application keeps its id, the
# same executor units and processes run, and `sparkctl results` gives every
# task's result exactly once.
# shellcheck source=tests/harness/lib.sh
. "$(dirname "$0")/../harness/lib.sh"
require_user_manager

tmp=$(harness_tmpdir)
require_task_lib

restart_driver_conf unit-restart --state-dir
driver_unit=spark-test-driver-$$
stop_user_units_on_exit "$driver_unit.service" 'spark-executor-*'

sparkctl() { "$SPARK_BUILD/sparkctl" --master "ipc://$tmp/master.sock" --driver "$(driver_url unit-restart)" "$@"; }
units() { executor_unit_pids; }
registrations() { unit_journal "$driver_unit" | grep -c "Executor [0-9]* registered"; }
registered() { [ "$(registrations)" -ge "$1" ]; }
job_running() { sparkctl jobs | grep -E "^$1 " | grep running | grep -Eq ' [1-9][0-9]*/2000 '; }
main_pid() { systemctl --user show -p MainPID --value "$driver_unit"; }

real_cluster 1 --master 'worker_timeout_ms = 5000;'
# the packaged unit's service settings; its sandboxing needs a system manager
rc=0
systemd-run --user --quiet --unit="$driver_unit" -p Type=notify -p WatchdogSec=30s -p Restart=on-failure \
        -p RestartSec=2s -p "RestartPreventExitStatus=78 79" -p ExecStartPre="$SPARK_BUILD/spark-driver --config $tmp/driver-unit-restart.conf --check-config" \
        "$SPARK_BUILD/spark-driver" --config "$tmp/driver-unit-restart.conf" || rc=$?
check_eq "the driver unit starts (Type=notify: it said READY)" 0 "$rc"
check "two executor units start" wait_until 30 executor_units_running 2
check "both register with the driver" wait_until 30 registered 2
app=$(sparkctl status --json | jq -r '.apps[0].app_id')
units_before=$(units)
pid_before=$(main_pid)

square_inputs 2000
rc=0
job=$(sparkctl submit --detach --name unit --function "$lib:slow_square" --inputs "$tmp/numbers") || rc=$?
check_eq "the job is submitted" 0 "$rc"
check "the job is under way" wait_until 20 job_running "$job"
rc=0
timeout 60 systemctl --user restart "$driver_unit" || rc=$?
check_eq "systemctl --user restart of the driver unit succeeds" 0 "$rc"
check "the unit runs a new driver process" test "$(main_pid)" != "$pid_before" -a "$(main_pid)" != 0
check "the driver restored its journal" wait_for journal_grep "$driver_unit" "Restored from .*application $app"
check "the executors register with it again" wait_until 30 registered 4
rc=0
sparkctl results "$job" --json >"$tmp/results.json" 2>"$tmp/results.err" || rc=$?
check_eq "the job succeeds" 0 "$rc"
check_eq "2,000 results, each task exactly once, in order" "$(seq 0 1999)" \
        "$(grep -o '"task":[0-9]*' "$tmp/results.json" | cut -d: -f2)"
check_eq "every result correct" "$(cat "$tmp/squares")" \
        "$(sed -n 's/.*"output":"\([0-9]*\)\\n".*/\1/p' "$tmp/results.json")"
check_eq "the same executor units and processes run, none added" "$units_before" "$(units)"
check_eq "the application kept its id" "$app" "$(sparkctl status --json | jq -r '.apps[0].app_id')"
check_eq "the master registered no other application" 1 "$(logged APP_REGISTERED master)"
