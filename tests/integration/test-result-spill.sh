#!/usr/bin/env bash
# A driver with driver.result_memory_mb = 1 runs a job whose results (3,000
# of 1,000 bytes) pass that limit: those beyond it go to the spill file, and
# `sparkctl results` still gives every result exactly once, in task order,
# byte for byte; also after the driver is restarted from its state_dir
# (the spill is rebuilt from the journal).  /metrics counts the spilled
# bytes; the state directory holds no spill file by name.
# shellcheck source=tests/harness/lib.sh
. "$(dirname "$0")/../harness/lib.sh"
require_user_manager

tmp=$(harness_tmpdir)
lib=$SPARK_BUILD/tests/helpers/tasks/spark-test-tasks.so
[ -f "$lib" ] || die "test helpers are not built (make test-helpers)"
http=$(free_port)

cat >"$tmp/cluster.conf" <<EOF
cluster: { master = "ipc://$tmp/master.sock"; master_events = "ipc://$tmp/master-events.sock"; };
master: { listen = "ipc://$tmp/master.sock"; events_listen = "ipc://$tmp/master-events.sock";
          state_dir = "$tmp/state"; http_listen = ""; };
driver: { app_name = "spill-test"; listen = "ipc://$tmp/driver.sock"; events_listen = "ipc://$tmp/driver-events.sock";
          cores_per_executor = 1; executor_memory_mb = 256; http_listen = "127.0.0.1:$http";
          state_dir = "$tmp/driver-state"; result_memory_mb = 1; };
worker: { listen = "ipc://$tmp/worker.sock"; events_listen = "ipc://$tmp/worker-events.sock";
          cores = 2; memory_mb = 2048; systemd_bus = "user"; work_dir = "$tmp/work"; heartbeat_ms = 300;
          executor_binary = "$SPARK_BUILD/spark-executor"; executor_slice = "spark-test.slice"; http_listen = ""; };
EOF
stop_user_units_on_exit 'spark-executor-*'

sparkctl() { "$SPARK_BUILD/sparkctl" --master "ipc://$tmp/master.sock" --driver "ipc://$tmp/driver.sock" "$@"; }
spilled_bytes() { curl -sf "http://127.0.0.1:$http/metrics" | awk '$1 == "spark_results_spilled_bytes" { print $2 }'; }
job_succeeded() { sparkctl jobs | grep -E "^$1 " | grep -q succeeded; }

# 3,000 inputs of 1,000 bytes: the task's number, then filler
awk 'BEGIN { pad = sprintf("%994s", ""); gsub(/ /, "r", pad); for (i = 0; i < 3000; i++) printf("%06d%s\n", i, pad) }' \
        >"$tmp/inputs"

# results_ok NAME JOB: every result once, in order, each its input
results_ok() {
        local name=$1 job=$2 rc=0
        sparkctl results "$job" --json >"$tmp/$name.json" 2>"$tmp/$name.err" || rc=$?
        check_eq "$name: the results are fetched" 0 "$rc"
        check_eq "$name: 3,000 results, in task order, each once" "$(seq 0 2999)" \
                "$(jq -r '.. | objects | select(has("task")) | .task' "$tmp/$name.json")"
        check_eq "$name: each result is its task's input, byte for byte" "$(cat "$tmp/inputs")" \
                "$(jq -r '.. | objects | select(has("task")) | .output' "$tmp/$name.json")"
}

start_daemon master "$SPARK_BUILD/spark-master" --config "$tmp/cluster.conf"
start_daemon worker "$SPARK_BUILD/spark-worker" --config "$tmp/cluster.conf"
start_daemon driver "$SPARK_BUILD/spark-driver" --config "$tmp/cluster.conf"
check "an executor registers" wait_until 30 executor_registered 1

rc=0
job=$(sparkctl submit --detach --name spill --function "$lib:echo" --inputs "$tmp/inputs") || rc=$?
check_eq "the job is submitted" 0 "$rc"
check "the job succeeds" wait_until 60 job_succeeded "$job"
check "the driver says results go to the spill file" grep -q "further results go to the spill file in $tmp/driver-state" \
        "$(daemon_log driver)"
s=$(spilled_bytes)
check "more than 1.9 MB of the 3 MB are spilled (got ${s:-none})" test "${s:-0}" -gt 1900000
results_ok before "$job"
check_eq "the state directory holds no spill file by name" "jobs.journal lib-" \
        "$(find "$tmp/driver-state" -mindepth 1 -printf '%f\n' | sed 's/lib-.*/lib-/' | sort | xargs)"

stop_daemon driver TERM
mv "$(daemon_log driver)" "$tmp/driver-before.log"
start_daemon driver "$SPARK_BUILD/spark-driver" --config "$tmp/cluster.conf"
check "the driver restored its journal" wait_for grep -q "Restored from .*3000 results" "$(daemon_log driver)"
s=$(spilled_bytes)
check "after the restart the results beyond the limit are spilled again (got ${s:-none})" test "${s:-0}" -gt 1900000
results_ok after "$job"
