#!/usr/bin/env bash
# Two masters on ZooKeeper across three hosts (docs/ha.md), every one a
# booted systemd container on a private bridge with the .debs of its roles:
#   node-1  ZooKeeper (Debian's server, standalone) and spark-master
#   node-2  spark-master and spark-worker
#   node-3  spark-worker, spark-driver and the operator's sparkctl
# Both masters run with recovery_mode "zookeeper" and every daemon lists
# both in cluster.master and cluster.master_events, all over tls+tcp:// with
# certificates of their roles from the installed spark-tls.  A job runs;
# `systemctl stop spark-master` on the leader's host; the other master leads,
# the job finishes with every result exactly once and no executor stopped or
# started again, a new job runs, an executor killed afterwards is replaced,
# the stopped master comes back as a standby, and no executor unit is left
# once the driver stops.
#
# worker_timeout_ms and worker.heartbeat_ms stay as shipped (10 s, 1 s): a
# worker leaves a stopped leader at its first heartbeat without an answer
# (each waits 2 heartbeats) since the leader's connection is gone, 2-3 s,
# which the new leader must wait for (docs/ha.md).
. "$(dirname "$0")/lib.sh"
require_system_test_host
command -v java >/dev/null && [ -e /usr/share/java/zookeeper.jar ] ||
        die "ZooKeeper's server is missing: apt-get install zookeeper"

BR=spkbr$$
NODES="node-1 node-2 node-3"
MASTERS="tls+tcp://node-1:7077,tls+tcp://node-2:7077"
EVENTS="tls+tcp://node-1:7078,tls+tcp://node-2:7078"
SESSION_TIMEOUT_MS=2000

# shellcheck disable=SC2086
ct_boot_network $BR $NODES
echo "# three containers up after $SECONDS s"

# --- ZooKeeper on node-1 --------------------------------------------------------------------
# Debian's server from the host's root (the overlay), as a transient unit:
# tickTime 200 ms grants sessions of 0.4-4 s; no AdminServer (it would bind
# *:8080, the master's web port); a small heap, as in tests/harness/zk.sh.
ZKD=/var/lib/spark-test-zk
mkdir -p "$(ct_root node-1)$ZKD/data"
cat >"$(ct_root node-1)$ZKD/zoo.cfg" <<CFG
tickTime=200
initLimit=10
syncLimit=5
dataDir=$ZKD/data
clientPort=2181
admin.enableServer=false
4lw.commands.whitelist=ruok,srvr
CFG
check "node-1: ZooKeeper starts as a transient unit" \
        ct node-1 systemd-run --quiet --unit=zookeeper-test --property=WorkingDirectory=$ZKD \
        java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Dzookeeper.log.dir=$ZKD \
        -Dzookeeper.root.logger=INFO,CONSOLE -cp "/etc/zookeeper/conf:/usr/share/java/*" \
        org.apache.zookeeper.server.quorum.QuorumPeerMain $ZKD/zoo.cfg
# zk_serves HOST: ZooKeeper on node-1 answers `srvr` from HOST.
zk_serves() {
        ct "$1" timeout 3 bash -c 'exec 3<>/dev/tcp/node-1/2181 && echo srvr >&3 && cat <&3' 2>/dev/null |
                grep -q '^Mode: standalone'
}
check "ZooKeeper serves on node-1:2181" wait_until 60 zk_serves node-1
check "node-2 reaches it over the bridge" wait_until 10 zk_serves node-2

# --- install and configure each role ---------------------------------------------------------
# The three hosts install at once (each has its own overlay and dpkg
# database), without man-db's index update, which takes longer than the
# packages themselves and is no part of the test.
declare -A ROLES=([node-1]="spark-common spark-master" [node-2]="spark-common spark-master spark-worker"
        [node-3]="spark-common spark-worker spark-driver")
declare -A installing=()
for h in $NODES; do
        rm -f "$(ct_root $h)/var/lib/man-db/auto-update"
        # shellcheck disable=SC2086
        ct_install_debs $h ${ROLES[$h]} >"$TEST_TMPDIR/install-$h.out" 2>&1 &
        installing[$h]=$!
done
for h in $NODES; do
        rc=0
        wait "${installing[$h]}" || rc=$?
        check_eq "$h: dpkg -i ${ROLES[$h]}" 0 "$rc"
        [ "$rc" = 0 ] || sed 's/^/#   /' "$TEST_TMPDIR/install-$h.out"
done
check_match "spark-master suggests zookeeperd" "zookeeperd" \
        "$(ct node-1 dpkg-query -W -f='${Suggests}' spark-master)"

# Certificates: the installed spark-tls on node-3, the operator's host.
CA=/root/cluster-ca
check "spark-tls ca makes the cluster CA" ct node-3 spark-tls ca $CA
check "spark-tls master for node-1 and node-2" eval \
        "ct node-3 spark-tls master $CA node-1-master node-1 10.77.0.1 >/dev/null &&
         ct node-3 spark-tls master $CA node-2-master node-2 10.77.0.2 >/dev/null"
check "spark-tls worker for node-2 and node-3" eval \
        "ct node-3 spark-tls worker $CA node-2-worker node-2 10.77.0.2 >/dev/null &&
         ct node-3 spark-tls worker $CA node-3-worker node-3 10.77.0.3 >/dev/null"
check "spark-tls driver for node-3 and admin for sparkctl" eval \
        "ct node-3 spark-tls driver $CA node-3-driver node-3 10.77.0.3 >/dev/null &&
         ct node-3 spark-tls admin $CA ops >/dev/null"
check "each host gets its daemons' files" eval \
        "ct_install_tls node-3 $CA node-1 node-1-master && ct_install_tls node-3 $CA node-2 node-2-master node-2-worker &&
         ct_install_tls node-3 $CA node-3 node-3-worker node-3-driver"
ct_admin_sparkctl node-3 $CA

for h in $NODES; do
        ct_tls_cluster $h "$MASTERS" "$EVENTS"
done
for h in node-1 node-2; do
        ct_tls_listen $h master 7077
        # the shipped master.conf names the keys of the zookeeper mode
        check "$h: master.conf set to recovery_mode \"zookeeper\" on node-1:2181" eval \
                "ct_set $h /etc/spark/master.conf master recovery_mode '\"zookeeper\"' &&
                 ct_set $h /etc/spark/master.conf master zookeeper '\"node-1:2181\"' &&
                 ct_set $h /etc/spark/master.conf master zookeeper_dir '\"/spark-system-test\"' &&
                 ct_set $h /etc/spark/master.conf master zookeeper_session_timeout_ms $SESSION_TIMEOUT_MS"
        check_match "$h: spark-master --check-config accepts it" "configuration OK" \
                "$(ct $h setpriv --reuid=spark --regid=spark --init-groups spark-master --check-config 2>&1)"
done
for h in node-2 node-3; do
        ct_tls_listen $h worker 7081
        ct_set $h /etc/spark/worker.conf worker cores 2
        ct_set $h /etc/spark/worker.conf worker memory_mb 2048
done
ct_tls_listen node-3 driver 7091
ct_set node-3 /etc/spark/driver.conf driver executor_listen '"tls+tcp://0.0.0.0:7093"'
ct_set node-3 /etc/spark/driver.conf driver app_name '"ha-across-hosts"'
ct_set node-3 /etc/spark/driver.conf driver executor_memory_mb 256
ct_set node-3 /etc/spark/driver.conf driver executor_heartbeat_timeout_ms 5000

# --- two masters, one leader -------------------------------------------------------------------
# status_json: the cluster as sparkctl on node-3 sees it, through both
# masters, or through $ASK alone once it is known to lead (sparkctl waits
# for an answer from a master that is down before it tries the next).
ASK=
status_json() { ct node-3 sparkctl ${ASK:+--master "$ASK"} status --json 2>/dev/null; }
# running HOST: executors the leader lists as running on HOST.
running() {
        status_json | python3 -c '
import json, sys
s = json.load(sys.stdin)
print(sum(1 for e in s.get("executors", []) if e.get("state") == "running" and e.get("host") == sys.argv[1]))' "$1"
}
# role_of HOST: that host's master's role in `sparkctl status --json`.
role_of() {
        ASK= status_json | python3 -c '
import json, sys
url = "tls+tcp://%s:7077" % sys.argv[1]
for m in json.load(sys.stdin).get("masters", []):
    if m.get("url") == url:
        print(m.get("role")); break' "$1"
}
role_is() { [ "$(role_of "$1")" = "$2" ]; }
epoch() { status_json | python3 -c 'import json, sys; print(json.load(sys.stdin).get("master_epoch", ""))'; }

check "node-1: systemctl start spark-master" ct node-1 systemctl start spark-master
check "node-1's master is elected leader" wait_until 30 role_is node-1 leader
check "node-2: systemctl start spark-master" ct node-2 systemctl start spark-master
check "node-2's master is a standby" wait_until 30 role_is node-2 standby
check "the granted session timeout is in node-1's journal" ct_journal_grep node-1 spark-master \
        "session timeout [0-9]+ ms \\(asked for $SESSION_TIMEOUT_MS ms\\)"
check_match "the standby answers with the leader's URL" "standby, leader is tls\\+tcp://node-1:7077" \
        "$(ct node-3 sparkctl --master tls+tcp://node-2:7077 status 2>&1)"
for h in node-2 node-3; do
        check "$h: systemctl start spark-worker" ct $h systemctl start spark-worker
done
check "node-3: systemctl start spark-driver" ct node-3 systemctl start spark-driver
workers_alive() {
        [ "$(status_json | python3 -c '
import json, sys
print(sorted(w["host"] for w in json.load(sys.stdin)["workers"] if w["state"] == "alive"))')" = "['node-2', 'node-3']" ]
}
check "the leader has node-2 and node-3 as alive workers" wait_until 30 workers_alive
for h in node-2 node-3; do
        check "2 executors run on $h" wait_until 30 eval "[ \"\$(running $h)\" -ge 2 ]"
done

echo "# the cluster runs after $SECONDS s"
LEADER=
for h in node-1 node-2; do role_is $h leader && LEADER=$h; done
OTHER=$([ "$LEADER" = node-1 ] && echo node-2 || echo node-1)
check_match "one master leads ($LEADER)" "^node-[12]$" "$LEADER"
epoch_before=$(epoch)
unit_pids() { for h in node-2 node-3; do ct_executor_pids $h; done; }
pids_before=$(unit_pids)

# --- failover in the middle of a job ------------------------------------------------------------
ct node-3 timeout $SUBMIT_TIMEOUT sparkctl submit --name failover --command 'sleep 0.5; echo {#} $(hostname)' --count 80 \
        >"$TEST_TMPDIR/job.out" 2>"$TEST_TMPDIR/job.err" &
job=$!
results_at_least() { [ "$(wc -l <"$TEST_TMPDIR/job.out")" -ge "$1" ]; }
check "the job is under way (10 results)" wait_until 30 results_at_least 10
t0=$(date +%s%N)
check "$LEADER: systemctl stop spark-master" ct $LEADER systemctl stop spark-master
at_stop=$(wc -l <"$TEST_TMPDIR/job.out")
check "the stop came in the middle of the job ($at_stop of 80 results in)" test "$at_stop" -lt 80
check "$OTHER's master leads" wait_until 30 role_is $OTHER leader
t1=$(date +%s%N)
echo "# failover: systemctl stop on $LEADER -> sparkctl status shows $OTHER leading after $(((t1 - t0) / 1000000)) ms"
check_eq "$LEADER's master is unreachable" unreachable "$(role_of $LEADER)"
ASK=tls+tcp://$OTHER:7077
epoch_after=$(epoch)
check "the new leader's epoch ($epoch_after) is newer than the old one's ($epoch_before)" \
        test "${epoch_after:-0}" -gt "${epoch_before:-0}"
check "$OTHER's journal says it restored the state from ZooKeeper" \
        ct_journal_grep $OTHER spark-master "Restored [0-9]+ applications"
ct_job_done $job "$TEST_TMPDIR/job.out" "$TEST_TMPDIR/job.err" 80
check_eq "the tasks ran on both workers" "node-2 node-3" "$(awk '{ print $2 }' "$TEST_TMPDIR/job.out" | sort -u | xargs)"
check_eq "no executor unit was stopped or started by the failover (same units, same MainPIDs)" \
        "$pids_before" "$(unit_pids)"
for h in node-2 node-3; do
        check "$h's worker registered with the new leader" ct_journal_grep $h spark-worker \
                "Registered with master .* at tls\\+tcp://$OTHER:7077"
done

# The failover's timeline, from the journals: every container runs on this
# kernel, so their monotonic timestamps are one clock.
# mono HOST UNIT REGEX: the time (s) of the last line of UNIT matching REGEX.
mono() {
        ct "$1" journalctl --no-pager -q -o short-monotonic --unit="$2" 2>/dev/null | grep -E -- "$3" | tail -n 1 |
                sed -E 's/^\[ *([0-9]+\.[0-9]+)\].*/\1/'
}
t_stop=$(mono $LEADER spark-master 'Received SIGTERM')
since() { [ -n "$t_stop" ] && [ -n "$1" ] && awk -v a="$t_stop" -v b="$1" 'BEGIN { printf "%d ms", (b - a) * 1000 }' || echo "?"; }
echo "# failover timeline after $LEADER's master got SIGTERM:" \
        "$OTHER elected $(since "$(mono $OTHER spark-master 'Elected leader')")," \
        "node-2's worker back $(since "$(mono node-2 spark-worker "Registered with master .* at tls\\+tcp://$OTHER")")," \
        "node-3's worker back $(since "$(mono node-3 spark-worker "Registered with master .* at tls\\+tcp://$OTHER")")"
echo "# the job: $(ct_unit_journal node-3 spark-driver | grep -E -o 'Job job-0001 .*' | tail -n 1)"

echo "# the failover checked after $SECONDS s"

# --- the new leader serves and places -----------------------------------------------------------
out=$(ct node-3 timeout $SUBMIT_TIMEOUT sparkctl submit --name after --command 'echo {#}' --count 20 2>&1)
check_eq "a job submitted after the failover runs: 20 results, each once" "$(seq 0 19)" "$out"
max_executor_id() {
        status_json | python3 -c '
import json, sys
print(max([e["executor_id"] for e in json.load(sys.stdin).get("executors", [])] or [0]))'
}
last=$(max_executor_id)
victim=$(ct_executor_units node-3 | head -n 1)
check "an executor unit on node-3 is killed ($victim)" ct node-3 systemctl kill -s KILL "$victim"
replaced() {
        [ "$(max_executor_id)" -gt "$last" ] && [ $(($(running node-2) + $(running node-3))) -ge 4 ]
}
check "the new leader places a replacement (executor id above $last) and 4 run again" wait_until 30 replaced
out=$(ct node-3 timeout $SUBMIT_TIMEOUT sparkctl submit --name replaced --command 'echo {#}' --count 20 2>&1)
check_eq "and a job runs on them: 20 results, each once" "$(seq 0 19)" "$out"

# --- the old leader comes back as a standby -------------------------------------------------------
check "$LEADER: systemctl start spark-master" ct $LEADER systemctl start spark-master
check "$LEADER's master is a standby" wait_until 30 role_is $LEADER standby
check_eq "$OTHER's master still leads" leader "$(role_of $OTHER)"

# --- nothing leaked -------------------------------------------------------------------------------
# units_match HOST: the executor units loaded there are the executors the
# leader lists as running there.
units_match() {
        [ "$(ct_executor_units "$1" | wc -l)" = "$(running "$1")" ]
}
for h in node-2 node-3; do
        check "$h: every executor unit is one the leader lists as running" wait_until 20 units_match $h
done
check "node-3: systemctl stop spark-driver" ct node-3 systemctl stop spark-driver
no_units() { [ -z "$(ct_executor_units node-2)$(ct_executor_units node-3)" ]; }
check "then no executor unit is left on either worker" wait_until 30 no_units
check_eq "and the leader lists no running executor" 0 "$(($(running node-2) + $(running node-3)))"
echo "# the whole test took $SECONDS s"
