#!/usr/bin/env bash
# Three hosts on a private network: node-1 runs the master and the driver,
# node-2 and node-3 a worker each, every one a booted systemd container with
# its own host name and address (10.77.0.N on a bridge of our own, nothing
# routed anywhere else) and the .debs of its role installed.  Every endpoint
# is tls+tcp://, with a certificate of its role for each daemon made by the
# installed spark-tls, and sparkctl presents an admin one.  A job runs
# across both workers; then node-3 loses power in the middle of a job: the
# master declares it lost and the job still completes with every result
# exactly once.
. "$(dirname "$0")/lib.sh"
require_system_test_host

BR=spkbr$$
NODES="node-1 node-2 node-3"
WORKER_TIMEOUT_MS=3000

# shellcheck disable=SC2086
ct_boot_network $BR $NODES

# --- install and configure each role ------------------------------------------------------
check "node-1: dpkg -i spark-common spark-master spark-driver" ct_install_debs node-1 spark-common spark-master spark-driver
for h in node-2 node-3; do
        check "$h: dpkg -i spark-common spark-worker" ct_install_debs $h spark-common spark-worker
done

# --- certificates: the installed spark-tls, run on node-1 as an operator would -------------
CA=/root/cluster-ca
check "spark-tls ca makes the cluster CA" ct node-1 spark-tls ca $CA
check "spark-tls master and driver for node-1" eval \
        "ct node-1 spark-tls master $CA node-1-master node-1 10.77.0.1 >/dev/null &&
         ct node-1 spark-tls driver $CA node-1-driver node-1 10.77.0.1 >/dev/null"
for n in 2 3; do
        check "spark-tls worker for node-$n" ct node-1 spark-tls worker $CA node-$n-worker node-$n 10.77.0.$n
done
check "spark-tls admin for the operator's sparkctl" ct node-1 spark-tls admin $CA ops
check_match "the worker's certificate carries its role" "OU ?= ?worker, CN ?= ?node-2-worker" \
        "$(ct node-1 openssl x509 -in $CA/node-2-worker.pem -noout -subject)"
check "node-1 gets the master's and the driver's files" ct_install_tls node-1 $CA node-1 node-1-master node-1-driver
for h in node-2 node-3; do
        check "$h gets its worker's files" ct_install_tls node-1 $CA $h $h-worker
done
# sparkctl as root on node-1 presents the admin certificate
ct_admin_sparkctl node-1 $CA

for h in $NODES; do
        ct_tls_cluster $h tls+tcp://node-1:7077 tls+tcp://node-1:7078
done
ct_tls_listen node-1 master 7077
ct_tls_listen node-1 driver 7091
# executors hold no certificate: they reach the driver here (spark.conf(5))
ct_set node-1 /etc/spark/driver.conf driver executor_listen '"tls+tcp://0.0.0.0:7093"'
for h in node-2 node-3; do
        ct_tls_listen $h worker 7081
done
for d in master driver; do
        check_match "node-1: spark-$d --check-config accepts the TLS configuration" "configuration OK" \
                "$(ct node-1 setpriv --reuid=spark --regid=spark --init-groups spark-$d --check-config 2>&1)"
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
tls_only() {
        local out
        out=$(ct node-1 ss -Hltn | awk '{ print $4 }' | grep -E ':(7077|7078|7091|7093)$' | sort | xargs)
        [ "$out" = "0.0.0.0:7077 0.0.0.0:7078 0.0.0.0:7091 0.0.0.0:7093" ]
}
check "node-1 listens on the bridge for the master and the driver" tls_only
rc=0
out=$(ct node-2 /usr/bin/sparkctl --master tls+tcp://node-1:7077 --tls-ca /etc/spark/tls/ca.pem status 2>&1) || rc=$?
check_eq "sparkctl without a certificate is refused from node-2 (exit 3)" 3 "$rc"
check_match "... the TLS handshake failed" "the TLS handshake failed" "$out"
rc=0
out=$(ct node-2 /usr/bin/sparkctl --master tcp://node-1:7077 status 2>&1) || rc=$?
check_eq "and plaintext tcp:// gets nothing from the master (exit 3)" 3 "$rc"
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
ct_job_done $job "$TEST_TMPDIR/cut.out" "$TEST_TMPDIR/cut.err" 60
check_match "the results after the cut came from node-2" "node-2" "$(tail -n 5 "$TEST_TMPDIR/cut.out")"
check "the master no longer counts executors on node-3 as running" \
        test "$(ct_count_executors node-1 running node-3)" = 0
