#!/usr/bin/env bash
# What a new leader waits for before it places (docs/ha.md, "Recovery after
# a failover"): the workers of the state it read, not any worker.  The
# leader saves a state that holds w1; then its saves fail (the meta znode
# made read-only), w2 registers and an app runs two executors on each.  w1
# is stopped (SIGSTOP: its executors run on), the leader is SIGKILLed, and
# the standby leads.  w2 registers first: its executors are taken back, but
# the wait goes on, as w1's executors may be on their way — placing for the
# app now would put executors on w1's free cores and stop w1's own as
# surplus when it comes back.  Meanwhile the snapshot says "recovering".
# w1 resumes and registers: the wait ends, its executors are taken back too,
# and no executor unit was stopped or started.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/cluster.sh"

cluster_init
require_zookeeper
require_zk_cli

ha_masters_init

ha_start_masters

M="$M1,$M2" ME="$ME1,$ME2"
worker_conf w1 tcp 2 1024
worker_conf w2 tcp 2 1024
M=$MASTERS ME=$EVENTS
start_worker w1
# A save falls due 50 ms after a change; nothing else comes meanwhile.
sleep 1
out=$(zk_cli setAcl "$ZK_TEST_DIR/state/meta" world:anyone:rda)
check_eq "meta made read-only" "" "$(echo "$out" | grep -i 'exception\|insufficient\|not exist' || true)"
start_worker w2

app=$("$FAKE_DRIVER" --master "$M1" register --name recovery --max-cores 4 --env SPARK_FAKE_MODE=sleep) ||
        die "the app did not register"
check "the app's 4 executors run" wait_for app_executors_are "$app" running 4
pids_before=$(for u in $(app_units "$app"); do unit_prop "$u" MainPID; done | sort | tr '\n' ' ')

kill -STOP "$(daemon_pid w1)"
stop_daemon m1 KILL || true
check "m2 leads after m1 is killed" wait_for ha_leads "$M2"
check "m2 read a state with w1 and without the app's executors" \
        grep -q "Restored 0 applications, 1 workers and 0 executors from ZooKeeper" "$(daemon_log m2)"
check "w2 registers with m2" wait_for grep -q "Registered with master .* at $M2" "$(daemon_log w2)"
check "m2 took w2's executors back" \
        wait_for grep -q "on ${WORKER_ID[w2]} was not in the restored state: taken back as it runs" "$(daemon_log m2)"
sleep 0.5
check_fails "m2 still waits for w1" grep -q "Recovery after the election done" "$(daemon_log m2)"
check_eq "its snapshot says so" "true" "$("$SPARKCTL" --master "$M2" status --json | jq -r .recovering)"
check "sparkctl status shows the wait" \
        bash -c "'$SPARKCTL' --master '$M2' status | grep -q 'places nothing until the workers of its saved state are back'"

kill -CONT "$(daemon_pid w1)"
check "the wait ends when w1 is back" \
        wait_for grep -q "Recovery after the election done: 1 of 1 workers registered again$" "$(daemon_log m2)"
check "m2 took w1's executors back" \
        wait_for grep -q "on ${WORKER_ID[w1]} was not in the restored state: taken back as it runs" "$(daemon_log m2)"
check "the app's 4 executors run under m2" wait_for app_executors_are "$app" running 4
check_eq "no longer recovering" "false" "$("$SPARKCTL" --master "$M2" status --json | jq -r .recovering)"
check_fails "m2 launched no executor" grep -q "Launching executor $app/" "$(daemon_log m2)"
check_eq "no executor unit was stopped or started" "$pids_before" \
        "$(for u in $(app_units "$app"); do unit_prop "$u" MainPID; done | sort | tr '\n' ' ')"

out=$(zk_cli setAcl "$ZK_TEST_DIR/state/meta" world:anyone:cdrwa)
"$FAKE_DRIVER" --master "$M2" unregister "$app" >/dev/null 2>&1 || true
