#!/usr/bin/env bash
# Units that behave and a worker that cleans up, against a real spark-master,
# spark-worker (executors as units of the test's user manager) and
# spark-driver: the memory a worker offers when it detects it (physical less
# worker.memory_reserve_mb, and a reserve that leaves nothing is a
# configuration error); a killed application's driver exits with 79 (what the
# packaged units' RestartPreventExitStatus= lists), and so does the driver of
# an application whose executors keep failing; the work dirs of a finished
# application are removed worker.work_dir_retention_s after its last executor
# ended, those of a running one and anything else in work_dir stay.
# shellcheck source=tests/harness/lib.sh
. "$(dirname "$0")/../harness/lib.sh"
require_user_manager
command -v jq >/dev/null || skip_all "jq is not installed"

T=$(harness_tmpdir)
SPARKCTL=$SPARK_BUILD/sparkctl
require_programs sparkctl spark-master spark-worker spark-driver spark-executor
export SPARK_MASTER_URL=ipc://$T/master.sock SPARK_DRIVER_URL=ipc://$T/driver.sock
stop_user_units_on_exit 'spark-executor-*'

RESERVE=300
cat >"$T/cluster.conf" <<CONF
cluster: { master = "$SPARK_MASTER_URL"; master_events = "ipc://$T/master-events.sock"; };
master: { listen = "$SPARK_MASTER_URL"; events_listen = "ipc://$T/master-events.sock"; state_dir = "$T/state";
          max_executor_retries = 2; worker_timeout_ms = 1500; };
CONF
# worker_conf NAME EXTRA-KEYS: a worker on the user bus with work dir
# $T/NAME-work, whose executors run $EXECUTOR (default spark-executor)
worker_conf() {
        cat >"$T/$1.conf" <<CONF
@include "cluster.conf"
worker: { listen = "ipc://$T/$1.sock"; events_listen = "ipc://$T/$1-events.sock";
          cores = 2; systemd_bus = "user"; work_dir = "$T/$1-work"; heartbeat_ms = 300;
          executor_binary = "${EXECUTOR:-$SPARK_BUILD/spark-executor}"; executor_slice = "spark-test.slice"; $2 };
CONF
}
# driver_conf NAME: an application NAME of one 2-core executor
driver_conf() {
        cat >"$T/$1.conf" <<CONF
@include "cluster.conf"
driver: { app_name = "$1"; listen = "ipc://$T/$1.sock"; events_listen = "ipc://$T/$1-events.sock";
          max_cores = 2; cores_per_executor = 2; executor_memory_mb = 256; };
CONF
}
q() { "$SPARKCTL" status --json 2>/dev/null | jq -r "$@"; }
app_id_of() { q --arg n "$1" '.apps[] | select(.name == $n) | .app_id'; }
app_running_executors() { [ "$(q --arg a "$1" '[.executors[] | select(.app_id == $a and .state == "running")] | length')" -ge 1 ]; }
exited() { ! daemon_alive "$1"; }
# exit_status NAME: the status of a daemon that ended by itself
exit_status() {
        local rc=0
        wait "$(daemon_pid "$1")" || rc=$?
        echo "$rc"
}

start_daemon master "$SPARK_BUILD/spark-master" --config "$T/cluster.conf"
check "the master answers" wait_for quietly "$SPARKCTL" status

# --- memory_reserve_mb -----------------------------------------------------------------
physical=$(($(getconf _PHYS_PAGES) * $(getconf PAGESIZE) / 1048576))
worker_conf w1 "memory_mb = 0; memory_reserve_mb = $RESERVE; work_dir_retention_s = 2;"
start_daemon w1 "$SPARK_BUILD/spark-worker" --config "$T/w1.conf"
worker_up() { [ "$(q '.workers | length')" -ge 1 ]; }
check "the worker registers" wait_for worker_up
check_eq "memory_mb = 0 offers the physical memory less memory_reserve_mb ($physical - $RESERVE MiB)" \
        "$((physical - RESERVE))" "$(q '.workers[0].memory_mb')"

worker_conf big "memory_mb = 0; memory_reserve_mb = $((physical + 1));"
out=$("$SPARK_BUILD/spark-worker" --config "$T/big.conf" 2>&1 </dev/null)
rc=$?
check_eq "a reserve larger than the host's memory stops the worker with 78 (a configuration error)" 78 "$rc"
check_match "... and says which key, in which file" \
        "$T/big.conf: worker.memory_reserve_mb = $((physical + 1)) leaves nothing of this host's $physical MiB" "$out"

# --- kill-app stops the driver for good ----------------------------------------------
W=$T/w1-work
echo "the operator's" >"$W/notes"
mkdir -p "$W/app-20200101000000-0001/1"                # a finished application's, from long ago
touch -d '2020-01-01' "$W/app-20200101000000-0001"
driver_conf first
start_daemon first "$SPARK_BUILD/spark-driver" --config "$T/first.conf"
app_known() { APP=$(app_id_of first) && [ -n "$APP" ]; }
check "the driver registers its application" wait_for app_known
check "its executor runs" wait_until 30 app_running_executors "$APP"
out=$("$SPARKCTL" --driver "ipc://$T/first.sock" submit --command 'echo {#} >out-{#}; echo {#}' --count 4 2>&1)
check_eq "a job runs in the executor's work dir" "$(seq 0 3)" "$out"
check "the executor's work dir is $W/$APP/1" test -s "$W/$APP/1/out-3"
gone() { [ ! -e "$1" ]; }
check "the worker removes a finished application's old work dirs" wait_until 5 gone "$W/app-20200101000000-0001"
sleep 3  # longer than work_dir_retention_s
check "a running application's work dir stays, however old" test -s "$W/$APP/1/out-3"

check "sparkctl kill-app $APP" quietly "$SPARKCTL" kill-app "$APP"
check "the driver exits" wait_until 10 exited first
check_eq "with status 79: the application failed for good, a restart would start a new one" 79 "$(exit_status first)"
check_match "it says why" "The master removed application $APP: killed on request; stopping" \
        "$(cat "$(daemon_log first)")"
check "its executor unit is gone" wait_until 15 eval '[ -z "$(user_units "spark-executor-$APP-*")" ]'
check "its work dir is removed work_dir_retention_s (2 s) after the executor ended" wait_until 10 gone "$W/$APP"
check_match "the worker logs the removal" "Removed the work dirs of $APP \($W/$APP\): idle for [0-9]+ s" \
        "$(cat "$(daemon_log w1)")"
check_eq "the operator's file and the worker's id file stay" "notes worker" \
        "$(cd "$W" && ls | sed 's/-.*//' | sort | xargs)"

# --- an application whose executors keep failing ---------------------------------------
# A worker whose executor program fails at once: the master gives up after
# max_executor_retries (2) and removes the application as failed.
stop_daemon w1
alive_workers() { [ "$(q '[.workers[] | select(.state == "alive")] | length')" -eq "$1" ]; }
check "the master takes the stopped worker for lost" wait_for alive_workers 0
EXECUTOR=/bin/false worker_conf bad 'memory_mb = 1024;'
start_daemon bad "$SPARK_BUILD/spark-worker" --config "$T/bad.conf"
check "a worker whose executors fail registers" wait_for alive_workers 1
driver_conf second
start_daemon second "$SPARK_BUILD/spark-driver" --config "$T/second.conf"
check "the second application's driver exits when its executors have failed too often" wait_until 30 exited second
check_eq "with status 79 as well" 79 "$(exit_status second)"
check_match "it says why" "The master removed application app-[0-9-]+: .*; stopping" "$(cat "$(daemon_log second)")"
