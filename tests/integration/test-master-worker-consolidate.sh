#!/usr/bin/env bash
# Placement with spread_out = false (consolidate) against real workers and the
# harness's systemd user manager: an app's executors go to the worker with the
# most free cores until it is full, cores_per_executor sets each unit's CPU
# share, default_cores caps an app that names no max, an app whose executor
# fits nowhere waits without a unit, and KillExecutor under a RequestExecutors
# limit stops a unit without a replacement.
# shellcheck disable=SC2016  # jq filters and literal "$" in hostile input
# shellcheck source=tests/harness/lib.sh
. "$(dirname "$0")/../harness/lib.sh"
# shellcheck source=tests/harness/cluster.sh
. "$(dirname "$0")/../harness/cluster.sh"

cluster_init
master_conf master 'spread_out = false; default_cores = 2; max_executor_retries = 3;'
start_master master
subscribe sub-m "$ME"
worker_conf small tcp 4 1024
worker_conf big ipc 6 1024
start_worker small
start_worker big
SMALL=${WORKER_ID[small]} BIG=${WORKER_ID[big]}

# on WORKER APP: how many of APP's executors run on WORKER
on() {
        app_executors "$2" running | grep -c " $1 "
}

# An executor that fits on no worker: the app waits, nothing is launched.
huge=$(register_app --name huge --max-cores 1 --memory 2048 --env SPARK_FAKE_MODE=sleep)
wide=$(register_app --name wide --max-cores 8 --cores-per-executor 8 --env SPARK_FAKE_MODE=sleep)
check_eq "an executor bigger than any worker's memory waits" "waiting 0" \
        "$(q '.apps[] | select(.app_id == $a) | "\(.state) \(.cores_granted)"' --arg a "$huge")"
check_eq "an executor with more cores than any worker waits" "waiting 0" \
        "$(q '.apps[] | select(.app_id == $a) | "\(.state) \(.cores_granted)"' --arg a "$wide")"
check_eq "... and neither has a unit" "0 0" "$(app_units_count "$huge") $(app_units_count "$wide")"
check "a waiting app can be unregistered" unregister_app "$huge"
check "... the other one too" unregister_app "$wide"

# 4 executors of 1 core: all on the worker with the most free cores.
a1=$(register_app --name first --max-cores 4 --memory 64 --env SPARK_FAKE_MODE=sleep)
check "the first app's 4 executors run" wait_for app_executors_are "$a1" running 4
check_eq "consolidate: all 4 on the 6-core worker" "4 0" "$(on "$BIG" "$a1") $(on "$SMALL" "$a1")"
check_eq "4 units" 4 "$(app_units_count "$a1")"

# The next app: the 4-core worker now has the most free cores.
a2=$(register_app --name second --max-cores 4 --memory 64 --env SPARK_FAKE_MODE=sleep)
check "the second app's 4 executors run" wait_for app_executors_are "$a2" running 4
check_eq "consolidate: all 4 on the 4-core worker" "0 4" "$(on "$BIG" "$a2") $(on "$SMALL" "$a2")"

# 2 cores per executor; no max_cores: default_cores = 2 caps it at one executor,
# which only fits where 2 cores are free.
a3=$(register_app --name pairs --cores-per-executor 2 --memory 64 --env SPARK_FAKE_MODE=sleep)
check "the third app's executor runs" wait_for app_executors_are "$a3" running 1
check_eq "default_cores caps an app that names no max" "2 2" \
        "$(q '.apps[] | select(.app_id == $a) | "\(.cores_granted) \(.max_cores)"' --arg a "$a3")"
check_eq "it went where 2 cores were free" "1 0" "$(on "$BIG" "$a3") $(on "$SMALL" "$a3")"
unit=$(unit_of "$a3" 1)
check_eq "a 2-core executor's unit gets 2 CPUs' quota" "CPUQuotaPerSecUSec=2s" \
        "$(systemctl --user show -p CPUQuotaPerSecUSec "$unit")"
check_match "... its command line says --cores 2" ' --cores 2 ' "$(unit_prop "$unit" ExecStart)"
check_eq "the cluster is full" "4/4 6/6" \
        "$(q '[.workers[] | "\(.cores_used)/\(.cores)"] | sort | join(" ")')"

# KillExecutor with RequestExecutors(3): the unit stops, nothing replaces it.
check "RequestExecutors(3) is accepted" "$FAKE_DRIVER" --master "$M" request-executors "$a2" 3
check "kill-executor is accepted" "$SPARKCTL" --master "$M" kill-executor "$a2" 1
check "the killed executor's unit is stopped" wait_for unit_gone "$(unit_of "$a2" 1)"
check "the master says KILLED, stopped on request" wait_for event_seen sub-m \
        "executor_updated app=$a2 exec=1 .*state=killed .*reason=stopped on request"
check_eq "it is not replaced (3 executors, the limit)" "2 3 4" "$(app_executor_ids "$a2" running)"
check_eq "no fifth executor was launched" 4 "$(events_count sub-m "executor_added app=$a2 ")"

for a in "$a1" "$a2" "$a3"; do
        check "unregistering $a succeeds" unregister_app "$a"
done
check "no executor unit remains" wait_for unit_gone 'spark-executor-*'
check "the workers and the master exit cleanly on SIGTERM" stop_cleanly small big master
