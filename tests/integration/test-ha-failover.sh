#!/usr/bin/env bash
# Standby masters on ZooKeeper (docs/ha.md): two masters elect one leader,
# the standby answers "standby, leader is URL", a worker and sparkctl given
# both follow the leader; the leader is SIGKILLed mid-run and the standby
# takes over with the state it kept in ZooKeeper: the executors run on, no
# unit is stopped or started again, and the new leader places a replacement
# when one ends.  The worker keeps the new leader's epoch in its work dir:
# restarted where no master can tell it the epoch again, it still refuses a
# launch of the old leader's.  The old leader, started again, is a standby.
# The worker leaves the killed leader at its first call without an answer:
# the leader's connection is gone (docs/ha.md).
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/cluster.sh"

cluster_init
require_zookeeper

ha_masters_init

# role URL: that master's role in `sparkctl status --json` given both
role() { "$SPARKCTL" --master "$MASTERS" status --json 2>/dev/null | jq -r --arg u "$1" '.masters[] | select(.url == $u) | .role'; }

check "m1 --check-config" "$SPARK_BUILD/spark-master" --config "$T/m1.conf" --check-config
ha_start_masters
check "the negotiated session timeout is logged" \
        grep -q 'session timeout [0-9]* ms (asked for 2000 ms)' "$(daemon_log m1)"
check_eq "status --json: m1 leads" "leader" "$(role "$M1")"
check_eq "status --json: m2 is a standby" "standby" "$(role "$M2")"
epoch_of() { "$SPARKCTL" --master "$1" status --json 2>/dev/null | jq -r '.master_epoch'; }
epoch1=$(epoch_of "$M1")

# The worker is given both masters, the standby first: it must find the leader.
M="$M2,$M1" ME="$ME2,$ME1"
worker_conf w1 tcp 4 1024
M=$MASTERS ME=$EVENTS
start_worker w1
check "the worker followed the standby to m1" grep -q "Registered with master .* at $M1" "$(daemon_log w1)"

app=$("$FAKE_DRIVER" --master "$M1" register --max-cores 2 --env SPARK_FAKE_MODE=sleep) || die "no app"
check "2 executors running" wait_for app_executors_are "$app" running 2
check "2 units" wait_for app_units_are "$app" 2
check "m1, elected on an empty state, placed them without a recovery wait" \
        bash -c "! grep -q 'Recovery after the election' '$(daemon_log m1)'"
pids_before=$(for u in $(app_units "$app"); do unit_prop "$u" MainPID; done | sort | tr '\n' ' ')

# Leader SIGKILL: its session expires after the negotiated timeout.
t0=$(date +%s%N)
stop_daemon m1 KILL || true
check "m2 leads after m1 is killed" wait_for ha_leads "$M2"
t1=$(date +%s%N)
echo "# failover: m1 SIGKILL -> m2 leads in $(((t1 - t0) / 1000000)) ms"
check "m2 restored the app from ZooKeeper" grep -q 'Restored 1 applications' "$(daemon_log m2)"
# m1 saved the worker, registered a moment before the app, in its snapshot:
# m2 waits for that worker only, not for all of worker_timeout_ms
# (docs/ha.md, "Recovery after a failover").  The app is in that snapshot
# too, or in the journal after it when m1 had not saved again yet.
check "and the worker, registered a moment before it" \
        grep -Eq 'Restored [01] applications, 1 workers' "$(daemon_log m2)"
check "m2's recovery ended when the worker was back" \
        wait_for grep -q 'Recovery after the election done: 1 of 1 workers registered again$' "$(daemon_log m2)"
check "the worker follows m2" wait_for grep -q "Registered with master .* at $M2" "$(daemon_log w1)"
# m1's process is gone, and with it the worker's connection: the worker
# tries m2 at its first call without an answer, not after two.
check "the worker left m1 at its first unanswered call, its connection gone" \
        grep -q "Master at $M1 closed its connection and does not answer; trying $M2" "$(daemon_log w1)"
check_fails "and never took m1 for merely slow" grep -q "Master at $M1 does not answer" "$(daemon_log w1)"
role_is() { [ "$(role "$1")" = "$2" ]; }
check "status --json: m1 unreachable" wait_for role_is "$M1" unreachable
check_eq "status --json: m2 leads" "leader" "$(role "$M2")"
check "the app's 2 executors are running under m2" wait_for app_executors_are "$app" running 2
pids_after=$(for u in $(app_units "$app"); do unit_prop "$u" MainPID; done | sort | tr '\n' ' ')
check_eq "no executor unit was stopped or started again" "$pids_before" "$pids_after"
t2=$(date +%s%N)
echo "# failover: m1 SIGKILL -> worker back with its executors in $(((t2 - t0) / 1000000)) ms"

# Fencing outlives a worker restart.  The worker saved m2's epoch...
epoch2=$(epoch_of "$M2")
check "m2's epoch ($epoch2) is newer than m1's ($epoch1)" test "$epoch2" -gt "$epoch1"
epoch_file_is() { [ "$(cat "${WORKER_DIR[w1]}"/worker-*.epoch 2>/dev/null)" = "spark-epoch $1" ]; }
check "the worker saved m2's epoch in its work dir" wait_for epoch_file_is "$epoch2"
# ...and restarted with masters that do not exist (no registration tells it
# the epoch again), it refuses a launch that carries m1's.
stop_daemon w1
unset "_daemon_pid[w1]"
p1=$(free_port) && p2=$(free_port) || die "no free port"
sed "1s|.*|cluster: { master = \"tcp://127.0.0.1:$p1\"; master_events = \"tcp://127.0.0.1:$p2\"; };|" \
        "$T/w1.conf" >"$T/w1-alone.conf"
start_daemon w1-alone "$SPARK_BUILD/spark-worker" --config "$T/w1-alone.conf"
check "the restarted worker read the epoch from its work dir" wait_for \
        grep -q "Refusing commands of leaders older than epoch $epoch2" "$(daemon_log w1-alone)"
stale_launch_refused() {
        "$FAKE_DRIVER" --master "${WORKER_LISTEN[w1]}" launch --app-id "$app" --worker-id "${WORKER_ID[w1]}" \
                --executor-id 50 --epoch "$epoch1" 2>&1 | grep -q "master epoch $epoch1 is older than the leader's, $epoch2"
}
check "it refuses a launch of the deposed leader's epoch" wait_for stale_launch_refused
check_eq "and started no unit for it" "" "$(app_units "$app" | grep -- '-50\.' || true)"
stop_daemon w1-alone
unset "_daemon_pid[w1-alone]"
start_worker w1 w1b
check "the worker registers with m2 again" wait_for grep -q "Registered with master .* at $M2" "$(daemon_log w1b)"
check "the app's 2 executors still run" wait_for app_executors_are "$app" running 2

# The new leader places: an executor that ends is replaced.
newest() { app_executor_ids "$app" running | tr ' ' '\n' | sort -n | tail -n 1; }
# (the worker's restart above may have outlasted worker_timeout_ms on a busy
# machine, and its executors been replaced: count from the newest id)
last=$(newest)
first=$(app_units "$app" | head -n 1)
systemctl --user kill -s KILL "$first" >/dev/null 2>&1
newest_is() { [ "$(newest)" = "$1" ]; }
check "m2 places a new executor (id $((last + 1))) for the killed one" wait_for newest_is $((last + 1))
check "and 2 run again" wait_for app_executors_are "$app" running 2

# The old leader comes back as a standby.
unset "_daemon_pid[m1]"
start_daemon m1b "$SPARK_BUILD/spark-master" --config "$T/m1.conf"
check "m1 restarted answers as a standby naming m2" wait_for ha_standby_for "$M1" "$M2"
check_eq "status through both finds the leader" "$app" \
        "$("$SPARKCTL" --master "$MASTERS" status --json | jq -r '.apps[0].app_id')"

"$FAKE_DRIVER" --master "$M2" unregister "$app" >/dev/null 2>&1
check "unregistered: units gone" wait_for app_units_are "$app" 0
