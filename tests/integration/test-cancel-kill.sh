#!/usr/bin/env bash
# Cancelling a job kills its running tasks at once: the driver answers each
# executor's parked poll with the kills right away, once for the whole batch,
# instead of letting them wait for the poll interval (up to 2 s).  A master,
# a driver and two workers of 2 cores each on the test's systemd user
# manager: the master places one executor of 2 cores on each, which its
# worker starts as a transient unit.  A job of 4 `sleep 600` tasks runs 2 on
# each executor (as children of the executor process, counted by its pid),
# whose polls are then parked; sparkctl cancels it.
#
# Not a timed check: the evidence is the driver's debug line saying it
# answered a parked poll because of kills, which nothing else writes —
# without that path the kills leave only when the park timer fires.  A
# cancel that lands while an executor's poll is between two parks (one round
# trip every poll interval) has its kills go on the fresh poll, at once too
# but without that line: then the round is played again, up to 3 times.
# shellcheck source=tests/harness/lib.sh
. "$(dirname "$0")/../harness/lib.sh"
require_real_cluster

T=$(harness_tmpdir)
SPARKCTL=$SPARK_BUILD/sparkctl

# the id of the job named $1
job_id() {
        "$SPARKCTL" jobs --json |
                python3 -c 'import json, sys; print([j["job_id"] for j in json.load(sys.stdin)["jobs"] if j["name"] == sys.argv[1]][-1])' "$1"
}

# The pid and the unit of executor N, from the driver's line
#   Executor N registered from HOST: C cores, pid P, unit U
# followed by the log fields [app=... executor=N ...] (the first such line:
# an executor registers once).
registered() {
        sed -En "s/.*Executor $1 registered from .*: [0-9]+ cores, pid ([0-9]+), unit ([^ ]+).*/\\$2/p" \
                "$(daemon_log driver)" | head -n 1
}
executor_pid() { registered "$1" 1; }
executor_unit() { registered "$1" 2; }
declare -A pid=() unit=()      # of executor N, once it registered

# executor N runs, and is still the process that registered as N: its unit's
# main process (a replacement would be a new unit under a new id)
executor_serving() {
        [ "$(systemctl --user show -p MainPID --value "${unit[$1]}" 2>/dev/null)" = "${pid[$1]}" ] &&
                kill -0 "${pid[$1]}" 2>/dev/null
}

# task processes (children) of executor N, but its sandbox holder
# (daemons/executor/sandbox-holder.c)
n_tasks_of() {
        ps --ppid "${pid[$1]}" -o comm= | grep -vcx executor-hold || true
}

tasks_running() {
        [ "$(n_tasks_of 1)" -eq 2 ] && [ "$(n_tasks_of 2)" -eq 2 ]
}

no_tasks() {
        [ "$(n_tasks_of 1)" -eq 0 ] && [ "$(n_tasks_of 2)" -eq 0 ]
}

# executor N's lines "Killing task I of JOB." for the tasks it had (not those
# it was told to kill but did not have: "... (not here).")
n_kills_logged() {
        unit_journal "${unit[$1]}" | grep -Ec "Killing task [0-3] of $2\.( |\$)"
}
kills_logged() {
        [ "$(n_kills_logged "$1" "$2")" -ge 2 ]
}

# The longest poll interval there is (a fifth of the timeout, at most 2 s).
# Two workers of 2 cores and executors of 2 cores: one executor on each.
sparkctl_driver_conf cancel-kill-test 'max_cores = 4; cores_per_executor = 2; executor_memory_mb = 512;
          executor_heartbeat_timeout_ms = 30000; locality_wait_ms = 0;'
stop_user_units_on_exit 'spark-executor-*'
real_cluster 2 --memory-mb 1024 --heartbeat-ms 500
start_daemon driver env SPARK_LOG_LEVEL=debug "$SPARK_BUILD/spark-driver" --config "$T/driver-cancel-kill-test.conf"
check "the driver registers its application" wait_for app_registered
check "both executors register" wait_until 30 executor_registered 2
for i in 1 2; do
        pid[$i]=$(executor_pid "$i")
        unit[$i]=$(executor_unit "$i")
        check_match "executor $i registered with its pid and unit" "^[0-9]+ spark-executor-[^ ]+-$i\.service\$" \
                "${pid[$i]} ${unit[$i]}"
        check_eq "... and is its unit's main process" "${pid[$i]:-none}" \
                "$(systemctl --user show -p MainPID --value "${unit[$i]:-none}" 2>&1)"
done

driver_log=$(daemon_log driver)
early=
for round in 1 2 3; do
        name=cancel-$round
        "$SPARKCTL" submit --name "$name" --command 'sleep 600' --count 4 >"$T/$name.out" 2>"$T/$name.err" &
        submit=$!
        check "$name: 2 tasks run on each executor" wait_until 30 tasks_running
        job=$(job_id "$name")
        # the executors' polls park again right after their tasks arrived
        sleep 0.5
        from=$(($(wc -l <"$driver_log") + 1))
        "$SPARKCTL" cancel "$job"
        check_eq "$name: sparkctl cancel succeeds" 0 "$?"
        rc=0
        wait "$submit" || rc=$?
        check_eq "$name: the submit of the cancelled job exits 1" 1 "$rc"
        check "$name: the tasks' processes are gone" wait_until 20 no_tasks
        check_match "$name: the job is cancelled" '"state":"cancelled"' "$("$SPARKCTL" job "$job" --json)"
        for i in 1 2; do
                # the executor logs to the journal, which writes asynchronously
                wait_until 10 kills_logged "$i" "$job"
                check_eq "$name: executor $i killed its 2 tasks" 2 "$(n_kills_logged "$i" "$job")"
        done

        # Each parked poll answered once for the batch, with both its kills.
        lines=$(tail -n "+$from" "$driver_log" | grep -F "answering its parked poll at once")
        n1=$(grep -c "Executor 1: answering its parked poll at once for 2 queued task kills" <<<"$lines")
        n2=$(grep -c "Executor 2: answering its parked poll at once for 2 queued task kills" <<<"$lines")
        check_eq "$name: no parked poll answered for fewer kills than its batch" "" \
                "$(grep -Ev 'for 2 queued task kills' <<<"$lines")"
        if [ "$n1" -eq 1 ] && [ "$n2" -eq 1 ]; then
                early=$round
                break
        fi
        echo "# $name: kills not sent on parked polls (executor 1: $n1, executor 2: $n2 lines); again"
done
check "the parked poll of each executor was answered at once with its kills (round ${early:-none})" \
        test -n "$early"

for i in 1 2; do
        check "executor $i is still serving" executor_serving "$i"
done
run_ok=0
"$SPARKCTL" submit --command 'echo {#}' --count 4 >"$T/after.out" 2>&1 || run_ok=$?
check_eq "a job after the cancels runs to its end" 0 "$run_ok"
check_eq "... with its outputs" "$(seq 0 3)" "$(cat "$T/after.out")"
