#!/usr/bin/env bash
# The master's history: a finished application and a lost worker stay in
# `sparkctl status --all` (not in plain status), with who submitted the
# application, its times, final state and what its executors used (CPU time
# and peak memory, sampled by the worker from the executors' units and
# completed by the executors' own getrusage() at their end); the
# chargeback line is logged; the history survives a restart of the master
# and is bounded by master.retained_apps.
# shellcheck source=tests/harness/lib.sh
. "$(dirname "$0")/../harness/lib.sh"
require_real_cluster

T=$(harness_tmpdir)
SPARKCTL=$SPARK_BUILD/sparkctl

sparkctl_driver_conf history-test 'max_cores = 2; cores_per_executor = 1; executor_memory_mb = 256; locality_wait_ms = 0;'

status_json() {
        "$SPARKCTL" status --json "$@" 2>/dev/null
}
app_id() {
        status_json | jq -r '.apps[0].app_id // empty'
}
history_app() {
        status_json --all | jq -c --arg a "$1" '.apps[] | select(.app_id == $a)'
}
app_in_history() {
        [ "$(history_app "$1" | jq -r .state)" = "$2" ]
}
usage_in() {
        local h
        h=$(history_app "$1")
        [ "$(jq -r .cpu_usage_ns <<<"$h")" -gt 0 ] && [ "$(jq -r .memory_peak_bytes <<<"$h")" -gt 0 ]
}

stop_user_units_on_exit 'spark-executor-*'
real_cluster 2 --memory-mb 1024 --master 'worker_timeout_ms = 1500; retained_apps = 1; retained_workers = 5;'
start_real_driver history-test driver
check "the driver registers its application" wait_for app_registered
app=$(app_id)
check "both executors register" wait_until 30 executor_registered 2
# work that uses CPU for a while (the worker samples every second)
# (each task prints the CPU time it used: `times`, the shell's and its
# children's user and system time)
check "a job that burns CPU succeeds" eval '"$SPARKCTL" submit \
        --command '"'"'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; times'"'"' --count 4 >"$T/job.out"'
# the tasks' own CPU time, in ns: "0m0.41s 0m0.01s" twice per task
tasks_cpu=$(grep -Eo '[0-9]+m[0-9.]+s' "$T/job.out" |
        awk -F'[ms]' '{ t += $1 * 60 + $2 } END { printf "%.0f", t * 1e9 }')
stop_daemon driver
check "the application leaves the live state" wait_for eval '[ -z "$(app_id)" ]'
check "it is in the history as finished" wait_for app_in_history "$app" finished
h=$(history_app "$app")
check_match "... submitted by the driver's connection" '"submitted_by":"ipc ' "$h"
check "... with its start and end times" jq -e '.start_time_ms > 1700000000000 and .end_time_ms >= .start_time_ms' <<<"$h"
check "... and what its executors used" wait_for usage_in "$app"
check "the chargeback line is logged" wait_for grep -Eq \
        "Application $app \\(history-test\\) submitted by ipc .*, finished after [0-9.]+ s: [0-9.]+ CPU seconds, peak memory [0-9.]+ MiB" \
        "$(daemon_log master)"
cpu=$(history_app "$app" | jq -r .cpu_usage_ns)
check "... with more than the idle executors' CPU time (> 0.1 s)" test "$cpu" -gt 100000000
# The executors ended right after the job: their last second is in the
# total only because each wrote its own getrusage() at its end.
check "... with all of the tasks' own CPU time ($tasks_cpu ns, more than 0.1 s)" \
        test "$cpu" -ge "$tasks_cpu" -a "$tasks_cpu" -gt 100000000
check_eq "the workers read and removed the executors' usage files" "" \
        "$(find "$T" -name .spark-usage 2>/dev/null)"
check_eq "plain status does not list it" "" "$(status_json | jq -r --arg a "$app" '.apps[] | select(.app_id == $a) | .app_id')"

# a lost worker
w2=$(status_json | jq -r --arg e "ipc://$T/worker2.sock" '.workers[] | select(.endpoint == $e) | .worker_id')
stop_daemon worker2
lost_worker() {
        [ "$(status_json --all | jq -r --arg w "$w2" '.workers[] | select(.worker_id == $w) | .state')" = lost ]
}
check "a stopped worker is lost, and kept in the history" wait_until 20 lost_worker
check_match "... with the reason" '"reason":"no heartbeat for' \
        "$(status_json --all | jq -c --arg w "$w2" '.workers[] | select(.worker_id == $w)')"

# a restart of the master keeps it all
stop_daemon master
start_daemon master2 "$SPARK_BUILD/spark-master" --config "$T/cluster.conf"
check "the master answers again" wait_for quietly "$SPARKCTL" status
check "the finished application survives the restart" app_in_history "$app" finished
check_eq "... with its use" "$cpu" "$(history_app "$app" | jq -r .cpu_usage_ns)"
check "the lost worker too" lost_worker

# retained_apps = 1: a second application pushes the first out
start_real_driver history-test driver2
check "a second application registers" wait_for eval '[ -n "$(app_id)" ]'
app2=$(app_id)
stop_daemon driver2
check "the second application is in the history" wait_for app_in_history "$app2" finished
check_eq "the first one is gone from it (retained_apps = 1)" "" "$(history_app "$app")"
check_eq "one application in the history" 1 "$(status_json --all | jq '.apps | length')"
