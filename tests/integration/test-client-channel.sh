#!/usr/bin/env bash
# Clients on the driver's task channel (docs/DESIGN.md §4, spark-driver(8)):
# beside a tcp:// endpoint the driver says at start that clients call
# there, names the channel's port in its answers over nng, and sparkctl's
# requests after the job's go there — seen as sparkctl's own connection to
# that port while it waits for a slow job, whose outputs come whole and in
# order.  A driver with driver.task_channel = false offers no channel, and
# sparkctl gets the same outputs over nng.
# shellcheck source=tests/harness/lib.sh
. "$(dirname "$0")/../harness/lib.sh"
require_real_cluster
command -v ss >/dev/null || skip_all "ss (iproute2) is not installed"

T=$(harness_tmpdir)
SPARKCTL=$SPARK_BUILD/sparkctl
stop_user_units_on_exit 'spark-executor-*'
real_cluster 1

read -r port < <(free_ports 1) || die "no free port"
export SPARK_DRIVER_URL=tcp://127.0.0.1:$port
# driver_conf NAME SETTINGS
driver_conf() {
        cat >"$T/driver-$1.conf" <<CONF
@include "cluster.conf"
driver: { app_name = "$1"; listen = "$SPARK_DRIVER_URL"; events_listen = "ipc://$T/driver-$1-events.sock";
          http_listen = ""; cores_per_executor = 1; executor_memory_mb = 256; $2 };
CONF
}
channel_port() {
        sed -n 's/.*Executors poll on the task channel, port \([0-9]*\) beside .*/\1/p' "$(daemon_log "$1")" | head -n 1
}
sparkctl_on_channel() {
        ss -tnpH state established "( dport = :$channel )" | grep -q '"sparkctl"'
}
# submit_slow: 8 tasks of half a second each, in the background; $pid
submit_slow() {
        seq 1 8 | "$SPARKCTL" submit --name slow --command 'sleep 0.5; echo {}' --inputs - >"$T/out" 2>"$T/err" &
        pid=$!
}

driver_conf channel ""
start_daemon driver "$SPARK_BUILD/spark-driver" --config "$T/driver-channel.conf"
check "the driver says that clients call on its task channel" wait_for grep -q \
        "Executors poll on the task channel, port [0-9]* beside $SPARK_DRIVER_URL, and clients call there\." \
        "$(daemon_log driver)"
channel=$(channel_port driver)
check "its executors register" wait_until 30 grep -q "Executor 2 registered" "$(daemon_log driver)"

submit_slow
check "sparkctl's requests after the job's go to the channel's port" wait_until 10 sparkctl_on_channel
wait "$pid"
rc=$?
check_eq "the job succeeds" 0 "$rc"
check_eq "its outputs are whole and in task order" "$(seq 1 8 | xargs)" "$(xargs <"$T/out")"
check_eq "sparkctl said nothing on stderr" "" "$(cat "$T/err")"
stop_daemon driver

# the same driver without a channel: nothing named, nng all the way
driver_conf nochannel "task_channel = false;"
start_daemon driver2 "$SPARK_BUILD/spark-driver" --config "$T/driver-nochannel.conf"
check "a driver with task_channel = false registers its executors" wait_until 30 grep -q "Executor 2 registered" \
        "$(daemon_log driver2)"
check_eq "it listens on no channel" "" "$(channel_port driver2)"
submit_slow
wait "$pid"
rc=$?
check_eq "the job succeeds over nng" 0 "$rc"
check_eq "with the same outputs" "$(seq 1 8 | xargs)" "$(xargs <"$T/out")"
