#!/usr/bin/env bash
# sparkctl submit / jobs / job / cancel against a real spark-master,
# spark-worker and spark-driver: the worker (2 cores) runs on the test's
# systemd user manager, and the master places the application's one executor
# of 2 cores on it, which the worker starts as a transient unit.  Command
# jobs (quoting of input lines, {} and {#}, task order), function jobs (a
# shared object built here), JSON lines for any output bytes, failed tasks
# and their exit status, and cancellation by SIGINT.
# shellcheck source=tests/harness/lib.sh
. "$(dirname "$0")/../harness/lib.sh"
require_user_manager

T=$(harness_tmpdir)
SPARKCTL=$SPARK_BUILD/sparkctl
require_programs sparkctl spark-master spark-worker spark-driver spark-executor
export SPARK_MASTER_URL=ipc://$T/master.sock SPARK_DRIVER_URL=ipc://$T/driver.sock

run() {
        out=$("$@" 2>"$T/stderr")
        rc=$?
        err=$(cat "$T/stderr")
}

# every line is a JSON object; prints "index:status" per line
json_lines() {
        python3 -c '
import json, sys
for line in sys.stdin:
    d = json.loads(line)
    print("%d:%s" % (d["task"], d["status"]))'
}

# One worker of 2 cores and an application that wants one executor of 2
# cores: the master places exactly that one executor there.
cat >"$T/spark.conf" <<CONF
cluster: { master = "$SPARK_MASTER_URL"; master_events = "ipc://$T/master-events.sock"; };
master: { listen = "$SPARK_MASTER_URL"; events_listen = "ipc://$T/master-events.sock"; state_dir = "$T/state"; };
worker: { listen = "ipc://$T/worker.sock"; events_listen = "ipc://$T/worker-events.sock";
          cores = 2; memory_mb = 1024; systemd_bus = "user"; work_dir = "$T/work"; heartbeat_ms = 500;
          executor_binary = "$SPARK_BUILD/spark-executor"; executor_slice = "spark-test.slice"; };
driver: { app_name = "sparkctl-test"; listen = "$SPARK_DRIVER_URL"; events_listen = "ipc://$T/driver-events.sock";
          max_cores = 2; cores_per_executor = 2; executor_memory_mb = 512; task_max_failures = 2; };
CONF
stop_user_units_on_exit 'spark-executor-*'
start_daemon master "$SPARK_BUILD/spark-master" --config "$T/spark.conf"
check "the master answers" wait_for quietly "$SPARKCTL" status
start_daemon worker "$SPARK_BUILD/spark-worker" --config "$T/spark.conf"
start_daemon driver "$SPARK_BUILD/spark-driver" --config "$T/spark.conf"
check "the driver registers its application" wait_for app_registered
check "the executor the worker starts registers with 2 cores" \
        wait_until 30 grep -Eq "Executor 1 registered from .*: 2 cores, pid [0-9]+, unit spark-executor-" \
        "$(daemon_log driver)"
check "the driver answers jobs" wait_for quietly "$SPARKCTL" jobs

# --- command jobs ---------------------------------------------------------------------
printf '%s\n' 'plain' "it's two words" '$HOME `id` $(echo no)' '' >"$T/inputs"
printf 'no newline at the end' >>"$T/inputs"
run "$SPARKCTL" submit --name quoting --command 'printf "%s|%s\n" {#} {}' --inputs "$T/inputs"
check_eq "a command job exits 0" 0 "$rc"
check_eq "inputs reach the command as data, outputs in task order" \
        "$(printf '%s\n' '0|plain' "1|it's two words" '2|$HOME `id` $(echo no)' '3|' '4|no newline at the end')" "$out"

run "$SPARKCTL" submit --command 'echo {#}' --count 300
check_eq "300 tasks exit 0" 0 "$rc"
check_eq "300 outputs in order" "$(seq 0 299)" "$out"

run "$SPARKCTL" submit --command 'echo out-{#}; exit $(( {#} == 2 ? 7 : 0 ))' --count 4
check_eq "a job with a failing task exits 1" 1 "$rc"
check_match "the failed task is reported with its exit status" "task 2 failed \(exit status 7, 2 attempts\)" "$err"
check_match "the outputs of the others are written" "^out-0$" "$out"

run "$SPARKCTL" submit --json --command 'printf "\377\n"; exit $(( {#} % 2 ))' --count 2
check_eq "--json with a failing task exits 1" 1 "$rc"
check_eq "--json writes one valid line per task" "$(printf '0:ok\n1:failed')" "$(json_lines <<<"$out")"
check_match "non-UTF-8 output is escaped" '"output":"\\u00ff\\n"' "$out"
check_match "the exit code is in the JSON" '"task":1,"status":"failed","attempts":2,"exit_code":1' "$out"

# --- function jobs ----------------------------------------------------------------------
if command -v cc >/dev/null; then
        cat >"$T/task.c" <<'C'
#include <spark/task.h>
#include <stdio.h>
#include <stdlib.h>
SPARK_TASK_ABI;
int shout(const spark_task_input *in, spark_task_output *out) {
        char *b = malloc(in->len + 32);
        int n = snprintf(b, 32, "%lld:", (long long) in->index);
        for (size_t i = 0; i < in->len; i++) {
                char c = ((const char *) in->data)[i];
                b[n + i] = c >= 'a' && c <= 'z' ? c - 32 : c;
        }
        b[n + in->len] = '\n';
        out->data = b;
        out->len = n + in->len + 1;
        return 0;
}
C
        check "a task library builds" cc -shared -fPIC -I"$SPARK_SRC/include" -o "$T/task.so" "$T/task.c"
        run "$SPARKCTL" submit --function "$T/task.so:shout" --inputs "$T/inputs"
        check_eq "a function job exits 0" 0 "$rc"
        check_match "its outputs come in task order" "^0:PLAIN
1:IT'S TWO WORDS" "$out"
        run "$SPARKCTL" submit --function "$T/task.so:shout" --count 3 --arg hi
        check_eq "--count with --arg gives each task the argument" "$(printf '0:HI\n1:HI\n2:HI')" "$out"
        run "$SPARKCTL" submit --function "$T/task.so:no_such_symbol" --count 1
        check_eq "a missing symbol fails the job" 1 "$rc"
fi

# --- jobs, job, cancel ---------------------------------------------------------------------
run "$SPARKCTL" jobs
check_match "jobs lists the named job" "^job-[0-9]+ +quoting +succeeded +5/5" "$out"
run "$SPARKCTL" jobs --json
check "jobs --json is valid JSON" quietly python3 -m json.tool <<<"$out"

"$SPARKCTL" submit --command 'sleep 30' --count 4 >/dev/null 2>"$T/cancel.err" &
pid=$!
check "the long job is running" wait_for bash -c "\"$SPARKCTL\" jobs | grep -q running"
kill -INT "$pid"
wait "$pid"
check_eq "SIGINT during submit exits 1" 1 "$?"
check_match "it says it cancels" "interrupted, cancelling job-" "$(cat "$T/cancel.err")"
job=$("$SPARKCTL" jobs --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["jobs"][-1]["job_id"])')
run "$SPARKCTL" job "$job" --json
check_match "the job was cancelled" '"state":"cancelled"' "$out"

run "$SPARKCTL" job job-9999
check_eq "an unknown job exits 1" 1 "$rc"
check_match "with the driver's message" "job-9999" "$err"

# --- submit --detach, results ----------------------------------------------------------------
run "$SPARKCTL" submit --detach --name later --command 'sleep 0.3; echo r{#}' --count 6
check_eq "submit --detach exits 0 at once" 0 "$rc"
check_match "... printing only the job id" '^job-[0-9]+$' "$out"
detached=$out
run "$SPARKCTL" results "$detached"
check_eq "results waits for the job and exits 0" 0 "$rc"
check_eq "results writes every output in task order" "$(printf 'r%d\n' 0 1 2 3 4 5)" "$out"
run "$SPARKCTL" results "$detached" --json
check_eq "results --json: one line per task, again (results stay fetchable)" \
        "$(printf '%d:ok\n' 0 1 2 3 4 5)" "$(json_lines <<<"$out")"
run "$SPARKCTL" submit --detach --command 'echo f{#}; exit $(( {#} == 1 ))' --count 3
failing=$out
run "$SPARKCTL" results "$failing"
check_eq "results of a job with a failed task exits 1" 1 "$rc"
check_match "and reports the failed task" "task 1 failed" "$err"
run "$SPARKCTL" results job-9999
check_eq "results of an unknown job exits 1" 1 "$rc"
"$SPARKCTL" submit --detach --command 'sleep 30' --count 2 >"$T/long.id"
"$SPARKCTL" results "$(cat "$T/long.id")" >/dev/null 2>"$T/results.err" &
pid=$!
sleep 1
kill -INT "$pid"
wait "$pid"
check_eq "SIGINT during results exits 1" 1 "$?"
check_match "... and says the job goes on" "stopped waiting; job-[0-9]+ goes on" "$(cat "$T/results.err")"
run "$SPARKCTL" job "$(cat "$T/long.id")" --json
check_match "the job is still running" '"state":"running"' "$out"
quietly "$SPARKCTL" cancel "$(cat "$T/long.id")"

# --- --app: the driver found through the master --------------------------------------------
run env -u SPARK_DRIVER_URL "$SPARKCTL" --app sparkctl-test submit --command 'echo {#}' --count 3
check_eq "--app NAME submits to that application's driver" "$(seq 0 2)" "$out"
app=$("$SPARKCTL" status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["apps"][0]["app_id"])')
run env -u SPARK_DRIVER_URL "$SPARKCTL" --app "$app" jobs
check_match "--app ID lists its jobs" "later" "$out"
run env -u SPARK_DRIVER_URL "$SPARKCTL" --app nosuchapp jobs
check_eq "--app with an unknown name exits 1" 1 "$rc"
check_match "... saying so" "no application with the id or name 'nosuchapp'" "$err"

# --- status: unit names; worker ids short in the table, whole in JSON ------------------------
run "$SPARKCTL" status
wid=$("$SPARKCTL" status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["workers"][0]["worker_id"])')
short=${wid#worker-??????????????-}
check_match "the JSON has the whole worker id" '^worker-[0-9]{14}-' "$wid"
check_match "the table shows it without worker-TIMESTAMP-" "^$short +" "$out"
check_match "the executor table names the executor's unit" "spark-executor-$app-1\.service" "$out"

# --- logs: the executors' output from the workers' journals -----------------------------------
run "$SPARKCTL" logs "$app"
check_eq "logs exits 0" 0 "$rc"
host=$("$SPARKCTL" status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["workers"][0]["host"])')
check_match "logs shows the executor's own lines, with time, host and executor id" \
        "^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8}\.[0-9]{3} $host 1: .*Registered with driver" "$out"
check_eq "only lines of that application's executors" "" \
        "$(grep -v " $host 1: " <<<"$out" || true)"
run "$SPARKCTL" logs "$app" 2
check_eq "logs APP 2: nothing of an executor that never ran" "0:" "$rc:$out"
run "$SPARKCTL" logs "$app" --since @4102444800
check_eq "--since a time to come: nothing" "0:" "$rc:$out"
run "$SPARKCTL" logs "$app" --since 1d
check_match "--since 1d: the lines of today" "Registered with driver" "$out"
run "$SPARKCTL" logs "$app" --since yesterday
check_eq "--since with a bad time is a usage error" 2 "$rc"
"$SPARKCTL" logs "$app" --follow >"$T/follow.out" 2>"$T/follow.err" &
pid=$!
sleep 1
quietly "$SPARKCTL" kill-executor "$app" 1
follow_sees_2() { grep -Eq " $host 2: .*Registered with driver" "$T/follow.out"; }
check "logs --follow shows the replacement executor's lines as they come" wait_until 30 follow_sees_2
kill -INT "$pid"
wait "$pid"
check_eq "Ctrl-C ends logs --follow with 0" 0 "$?"
check_eq "the lines came in time order" "$(cut -c1-23 "$T/follow.out")" "$(cut -c1-23 "$T/follow.out" | sort)"
