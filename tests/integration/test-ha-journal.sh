#!/usr/bin/env bash
# The journal of new applications in ZooKeeper (docs/ha.md): each
# application a leader registers is a journal znode, created before it is
# answered, so a standby that takes over knows it even if no full save
# held it.  Here the leader's full saves cannot succeed (its meta znode is
# made read-only in ZooKeeper, as a failing save would leave it), three
# applications register, the leader is SIGKILLed, and the standby leads
# with all of them, replayed from the journal; it hands out no app id twice.
# Its state has no worker and no executor: it waits for the worker to say
# what it runs before it places anything, and launches nothing beside the
# executors that run on.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/cluster.sh"

cluster_init
require_zookeeper
require_zk_cli

ha_masters_init

apps_of() { "$SPARKCTL" --master "$1" status --json 2>/dev/null | jq -r '.apps[].app_id' | sort | tr '\n' ' '; }

ha_start_masters

# No full save from here on: meta may be read, not written.
out=$(zk_cli setAcl "$ZK_TEST_DIR/state/meta" world:anyone:rda)
check_eq "meta made read-only" "" "$(echo "$out" | grep -i 'exception\|insufficient\|not exist' || true)"

# A worker, which runs the first app's executors: no snapshot holds it or
# them either.
M="$M1,$M2" ME="$ME1,$ME2"
worker_conf w1 tcp 2 1024
M=$MASTERS ME=$EVENTS
start_worker w1

ids=()
for i in 1 2 3; do
        id=$("$FAKE_DRIVER" --master "$M1" register --name "journal-$i" --max-cores 2 --env SPARK_FAKE_MODE=sleep) ||
                die "app $i did not register"
        ids+=("$id")
done
check "the first app's 2 executors run on w1" wait_for app_executors_are "${ids[0]}" running 2
pids_before=$(for u in $(app_units "${ids[0]}"); do unit_prop "$u" MainPID; done | sort | tr '\n' ' ')
want=$(printf '%s\n' "${ids[@]}" | sort | tr '\n' ' ')
check_eq "m1 knows the 3 apps" "$want" "$(apps_of "$M1")"
check "m1's full save fails: no snapshot holds the apps" \
        wait_for grep -q "Failed to write the state to .*: Permission denied" "$(daemon_log m1)"

stop_daemon m1 KILL || true
check "m2 leads after m1 is killed" wait_for ha_leads "$M2"
check "m2 replayed the 3 apps from the journal" \
        grep -q "Restored 3 applications registered after the last snapshot from the journal in ZooKeeper" \
        "$(daemon_log m2)"
check_eq "m2 knows the 3 apps" "$want" "$(apps_of "$M2")"
# The state m2 read has no worker and no executor: it places nothing until
# w1 has said what it runs (or worker_timeout_ms is up), and so takes the
# first app's executors back instead of launching others beside them.
check "w1 registers with m2" wait_for grep -q "Registered with master .* at $M2" "$(daemon_log w1)"
check "m2 took the running executors back" \
        wait_for grep -q "was not in the restored state: taken back as it runs" "$(daemon_log m2)"
check "m2 placed nothing before" wait_for grep -q "Recovery after the election done" "$(daemon_log m2)"
check_eq "the first app's executor units were neither stopped nor started again" "$pids_before" \
        "$(for u in $(app_units "${ids[0]}"); do unit_prop "$u" MainPID; done | sort | tr '\n' ' ')"
check_fails "m2 launched no executor for the first app" grep -q "Launching executor ${ids[0]}/" "$(daemon_log m2)"

# Saves work again; a new app gets an id none of the others had.
out=$(zk_cli setAcl "$ZK_TEST_DIR/state/meta" world:anyone:cdrwa)
check_eq "meta writable again" "" "$(echo "$out" | grep -i 'exception\|insufficient' || true)"
id=$("$FAKE_DRIVER" --master "$M2" register --name journal-4) || die "app 4 did not register"
check "the new app's id ($id) is new" bash -c "! printf '%s\n' $want | grep -qx '$id'"
check_eq "m2 knows the 4 apps" "$(printf '%s\n' "${ids[@]}" "$id" | sort | tr '\n' ' ')" "$(apps_of "$M2")"
for a in "${ids[@]}" "$id"; do "$FAKE_DRIVER" --master "$M2" unregister "$a" >/dev/null 2>&1 || true; done
