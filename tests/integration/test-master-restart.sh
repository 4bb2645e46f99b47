#!/usr/bin/env bash
# The master restarts (crashes, or is restarted cleanly) in the middle of a
# job: from its state_dir it knows its application, workers and executors
# again, the executors go on running, the job completes with every result
# exactly once, and no id is handed out twice.
# shellcheck source=tests/harness/lib.sh
. "$(dirname "$0")/../harness/lib.sh"
require_user_manager

tmp=$(harness_tmpdir)
require_task_lib
fake_driver=$SPARK_BUILD/tests/helpers/fake-driver
[ -x "$fake_driver" ] || die "test helpers are not built (make test-helpers)"

restart_driver_conf restart-test
stop_user_units_on_exit 'spark-executor-*'

sparkctl() { "$SPARK_BUILD/sparkctl" --master "ipc://$tmp/master.sock" --driver "$(driver_url restart-test)" "$@"; }
units() { systemctl --user list-units --no-legend --plain 'spark-executor-*' | awk '$3 == "active" { print $1 }' | sort; }
# "APP/EXEC STATE" for every executor the master knows, sorted
master_executors() { sparkctl status --json | jq -r '.executors[] | "\(.app_id)/\(.executor_id) \(.state)"' | sort; }
master_knows_all() { [ "$(master_executors | grep -c ' running$')" -eq 4 ]; }
same_executors() { [ "$executors_before" = "$(master_executors)" ]; }
job_running() { sparkctl jobs | grep -E "^job-[0-9]+ +$1 +running" | grep -Eq ' [1-9][0-9]*/2000 '; }

real_cluster 2 --master 'worker_timeout_ms = 5000;'
start_real_driver restart-test driver
check "four executor units start" wait_until 30 executor_units_running 4
check "the master sees them running" wait_until 30 master_knows_all
check "the state is kept in state_dir" wait_for test -s "$tmp/state/state.pb"
app=$(sparkctl status --json | jq -r '.apps[0].app_id')
units_before=$(units)
executors_before=$(master_executors)

square_inputs 2000

# restart_during_job NAME SIGNAL: a job of 2,000 tasks; the master gets
# SIGNAL mid-job and is started again.
restart_during_job() {
        local name=$1 sig=$2 rc=0
        sparkctl submit --json --name "$name" --function "$lib:slow_square" --inputs "$tmp/numbers" \
                >"$tmp/$name.json" 2>"$tmp/$name.err" &
        local submit=$!
        check "$name: the job is under way" wait_until 20 job_running "$name"
        stop_daemon master "$sig"
        mv "$(daemon_log master)" "$tmp/master-before-$name.log"
        start_daemon master "$SPARK_BUILD/spark-master" --config "$tmp/cluster.conf"
        check "$name: the master restored its state" wait_for grep -q "Restored 1 applications, 2 workers and 4 executors" \
                "$(daemon_log master)"
        # the workers are asked to say what they run before anything is placed
        check "$name: the workers registered again before placement went on" wait_for grep -q \
                "Recovery after the restart done: 2 of 2 workers registered again$" "$(daemon_log master)"
        wait $submit || rc=$?
        check_eq "$name: the job succeeds" 0 "$rc"
        check_square_results "$name" "$tmp/$name.json"
        check_eq "$name: the same executor units run, none added" "$units_before" "$(units)"
        check "$name: the master knows the same executors, running" wait_until 10 same_executors
        check_eq "$name: the application kept its id" "$app" "$(sparkctl status --json | jq -r '.apps[0].app_id')"
        check_eq "$name: the master launched no executor after the restart" 0 "$(logged EXECUTOR_LAUNCHED master)"
}

restart_during_job crash KILL
restart_during_job restart TERM

# The state holds the driver's executor key, which the master hands to the
# worker of each new executor: private, and kept across the restarts, so an
# executor launched afterwards gets a secret its driver takes.
check_eq "the state file is private (it holds executor keys)" 600 "$(stat -c %a "$tmp/state/state.pb")"
victim=$(units | head -n 1)
systemctl --user kill -s KILL "$victim"
check "an executor the restarted master launches registers with the driver" wait_until 30 executor_registered 5

# ids are never handed out twice: the next app continues the count
rc=0
new_app=$("$fake_driver" --master "ipc://$tmp/master.sock" register --name probe --driver-url "ipc://$tmp/nobody.sock" \
        --max-cores 1 --memory 64) || rc=$?
check_eq "another application registers" 0 "$rc"
check_eq "it gets the next id of the same master" "${app%-*}-0002" "$new_app"
"$fake_driver" --master "ipc://$tmp/master.sock" unregister "$new_app" >/dev/null 2>&1 || true

# a corrupt state file is moved aside, not trusted
stop_daemon master TERM
mv "$(daemon_log master)" "$tmp/master-before-corrupt.log"
printf 'not a protobuf \xff\xff\xff' >"$tmp/state/state.pb"
start_daemon master "$SPARK_BUILD/spark-master" --config "$tmp/cluster.conf"
check "a corrupt state file is reported" wait_for grep -q "state.pb is corrupt; moved aside" "$(daemon_log master)"
check "... and kept for a post-mortem" bash -c "ls '$tmp'/state/state.pb.corrupt-* >/dev/null"
check "the workers register again with the fresh master" wait_until 20 \
        bash -c "[ \"\$('$SPARK_BUILD/sparkctl' --master 'ipc://$tmp/master.sock' status --json | jq '.workers | length')\" = 2 ]"

stop_daemon driver TERM
