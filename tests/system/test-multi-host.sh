#!/usr/bin/env bash
# Three hosts on a private network: node-1 runs the master and the driver,
# node-2 and node-3 a worker each, every one a booted systemd container with
# its own host name and address (10.77.0.N on a bridge of our own, nothing
# routed anywhere else) and the .debs of its role installed.  A job runs
# across both workers; then node-3 loses power in the middle of a job: the
# master declares it lost and the job still completes with every result
# exactly once.
. "$(dirname "$0")/lib.sh"
require_system_test_host

BR=spkbr$$
NODES="node-1 node-2 node-3"
WORKER_TIMEOUT_MS=3000

bridge_create $BR
n=0
for h in $NODES; do
        n=$((n + 1))
        # ct_boot mounts the overlay first: write /etc/hosts once it is there.
        ct_boot $h --network-bridge=$BR
        cat >"$(ct_root $h)/etc/hosts" <<EOF
127.0.0.1 localhost
10.77.0.1 node-1
10.77.0.2 node-2
10.77.0.3 node-3
EOF
        check "$h: address 10.77.0.$n on the private bridge" ct_address $h 10.77.0.$n/24
done
check_eq "and nothing else: no default route in any container" "" \
        "$(for h in $NODES; do ct $h ip route show default; done)"

# --- install and configure each role ------------------------------------------------------
check "node-1: dpkg -i spark-common spark-master spark-driver" ct_install_debs node-1 spark-common spark-master spark-driver
for h in node-2 node-3; do
        check "$h: dpkg -i spark-common spark-worker" ct_install_debs $h spark-common spark-worker
done
for h in $NODES; do
        ct_set $h /etc/spark/cluster.conf cluster master '"tcp://node-1:7077"'
        ct_set $h /etc/spark/cluster.conf cluster master_events '"tcp://node-1:7078"'
done
ct_set node-1 /etc/spark/master.conf master worker_timeout_ms $WORKER_TIMEOUT_MS
ct_set node-1 /etc/spark/driver.conf driver app_name '"across-hosts"'
ct_set node-1 /etc/spark/driver.conf driver executor_memory_mb 256
ct_set node-1 /etc/spark/driver.conf driver executor_heartbeat_timeout_ms 5000
for h in node-2 node-3; do
        ct_set $h /etc/spark/worker.conf worker cores 2
        ct_set $h /etc/spark/worker.conf worker memory_mb 2048
done

check "node-1: systemctl start spark-master" ct node-1 systemctl start spark-master
# TCP to the master's port, by name, from each worker host.
reaches_master() { ct "$1" timeout 2 bash -c 'exec 3<>/dev/tcp/node-1/7077' 2>/dev/null; }
for h in node-2 node-3; do
        check "$h reaches node-1:7077 over the bridge" wait_until 10 reaches_master $h
done
for h in node-2 node-3; do
        check "$h: systemctl start spark-worker" ct $h systemctl start spark-worker
done
check "node-1: systemctl start spark-driver" ct node-1 systemctl start spark-driver
workers_alive() {
        [ "$(ct node-1 sparkctl status --json 2>/dev/null | python3 -c '
import json, sys
print(sorted(w["host"] for w in json.load(sys.stdin)["workers"] if w["state"] == "alive"))')" = "['node-2', 'node-3']" ]
}
check "the master has node-2 and node-3 as alive workers" wait_until 30 workers_alive
for h in node-2 node-3; do
        check "2 executors run on $h" wait_until 30 ct_executors_at_least node-1 running 2 $h
done

# --- a job across both workers --------------------------------------------------------------
out=$(ct node-1 timeout $SUBMIT_TIMEOUT sparkctl submit --name across --command 'sleep 0.1; echo {#} $(hostname)' --count 40 2>&1)
check_eq "40 tasks, each result once, in task order" "$(seq 0 39)" "$(awk '{ print $1 }' <<<"$out")"
check_eq "the tasks ran on both workers" "node-2 node-3" "$(awk '{ print $2 }' <<<"$out" | sort -u | xargs)"

# --- power cut on node-3 mid-job ----------------------------------------------------------
ct node-1 timeout $SUBMIT_TIMEOUT sparkctl submit --name power-cut --command 'sleep 0.4; echo {#} $(hostname)' --count 60 \
        >"$TEST_TMPDIR/cut.out" 2>"$TEST_TMPDIR/cut.err" &
job=$!
sleep 2.5
node3_lines=$(grep -c 'node-3' "$TEST_TMPDIR/cut.out" || true)
t_cut=$(date +%s%N)
ct_power_cut node-3
echo "# node-3 lost power $(awk -v n="$node3_lines" 'BEGIN { print n }') results into the job"
check "node-3's container is gone" _ct_gone node-3
node3_lost() {
        ct node-1 sparkctl status --json 2>/dev/null | python3 -c '
import json, sys
sys.exit(1 if any(w["host"] == "node-3" and w["state"] == "alive" for w in json.load(sys.stdin)["workers"]) else 0)'
}
check "the master declares node-3 lost (no longer an alive worker)" wait_until $((WORKER_TIMEOUT_MS / 1000 + 10)) node3_lost
t_lost=$(date +%s%N)
echo "# declared lost $(( (t_lost - t_cut) / 1000000 )) ms after the power cut (worker_timeout_ms $WORKER_TIMEOUT_MS)"
check "the master's journal says so (MESSAGE_ID worker lost)" wait_until 5 eval \
        '[ -n "$(ct node-1 journalctl -q --no-pager -u spark-master MESSAGE_ID=e2e52f9e8541498b964403823d71c888)" ]'
timeout 120 tail --pid=$job -f /dev/null
wait $job
rc=$?
check_eq "the job completes (sparkctl exits 0)" 0 "$rc"
[ "$rc" = 0 ] || sed 's/^/#   stderr: /' "$TEST_TMPDIR/cut.err"
check_eq "with every one of the 60 results exactly once" "$(seq 0 59)" "$(awk '{ print $1 }' "$TEST_TMPDIR/cut.out")"
check_match "the results after the cut came from node-2" "node-2" "$(tail -n 5 "$TEST_TMPDIR/cut.out")"
check "the master no longer counts executors on node-3 as running" \
        test "$(ct_count_executors node-1 running node-3)" = 0
