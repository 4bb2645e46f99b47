#!/usr/bin/env bash
# Labels and named resources against the real user manager (spark.conf(5),
# docs/resources.md): worker1 carries a label and offers two static gpu
# addresses, worker2 finds its gpu with a discovery script and has a second
# script that prints bad JSON.  An application that needs the label and one
# gpu per executor gets its executors on worker1 only, each with its own
# address in SPARK_RESOURCE_GPU and its device in the unit's DeviceAllow=;
# an application whose constraint no worker has waits, and
# `sparkctl status --json` says why.
# shellcheck source=tests/harness/lib.sh
. "$(dirname "$0")/../harness/lib.sh"
require_user_manager
command -v python3 >/dev/null || skip_all "no python3"

tmp=$(harness_tmpdir)

cat >"$tmp/cluster.conf" <<EOF
cluster: { master = "ipc://$tmp/master.sock"; master_events = "ipc://$tmp/master-events.sock"; };
master: { listen = "ipc://$tmp/master.sock"; events_listen = "ipc://$tmp/master-events.sock";
          state_dir = "$tmp/state"; worker_timeout_ms = 3000; };
EOF
cat >"$tmp/find-gpu" <<'EOF'
#!/bin/sh
echo '{"name":"gpu","addresses":["7"],"devices":{"7":["/dev/zero"]}}'
EOF
cat >"$tmp/find-fpga" <<'EOF'
#!/bin/sh
echo '{"name":"fpga","addresses":["0","0"]}'
EOF
chmod 755 "$tmp/find-gpu" "$tmp/find-fpga"
for i in 1 2; do
        if [ "$i" = 1 ]; then
                offer='labels = [ "gpu-node" ];
          resources = { gpu = { addresses = [ "0", "1" ]; devices = [ "/dev/null", "/dev/zero" ]; }; };'
        else
                offer="resources = { gpu = { discovery = \"$tmp/find-gpu\"; }; fpga = { discovery = \"$tmp/find-fpga\"; }; };"
        fi
        cat >"$tmp/worker$i.conf" <<EOF
@include "cluster.conf"
worker: { listen = "ipc://$tmp/worker$i.sock"; events_listen = "ipc://$tmp/worker$i-events.sock";
          cores = 4; memory_mb = 2048; systemd_bus = "user"; work_dir = "$tmp/work$i"; heartbeat_ms = 500;
          executor_binary = "$SPARK_BUILD/spark-executor"; executor_slice = "spark-test.slice";
          $offer };
EOF
done
cat >"$tmp/driver1.conf" <<EOF
@include "cluster.conf"
driver: { app_name = "gpu-app"; listen = "ipc://$tmp/driver1.sock"; events_listen = "ipc://$tmp/driver1-events.sock";
          cores_per_executor = 1; executor_memory_mb = 256; executor_heartbeat_timeout_ms = 3000;
          constraints = [ "gpu-node" ]; executor_resources = { gpu = 1; }; };
EOF
cat >"$tmp/driver2.conf" <<EOF
@include "cluster.conf"
driver: { app_name = "nvme-app"; listen = "ipc://$tmp/driver2.sock"; events_listen = "ipc://$tmp/driver2-events.sock";
          cores_per_executor = 1; executor_memory_mb = 256; constraints = [ "nvme" ]; };
EOF
stop_user_units_on_exit 'spark-executor-*'

sparkctl() { "$SPARK_BUILD/sparkctl" --master "ipc://$tmp/master.sock" "$@"; }
executor_units() { systemctl --user list-units --no-legend --plain 'spark-executor-*' | awk '$3 == "active" { print $1 }'; }
n_executor_units() { executor_units | wc -l; }
units_running() { [ "$(n_executor_units)" -ge "$1" ]; }
# status_py EXPR: EXPR over the cluster state's JSON (s), printed
status_py() {
        sparkctl status --json >"$tmp/status.json" 2>/dev/null || return 1
        python3 -c "import json, sys; s = json.load(open(sys.argv[1])); print($1)" "$tmp/status.json"
}
worker_registered() { [ "$(logged WORKER_REGISTERED master)" -ge 2 ]; }
app_waits() { [ "$(status_py "[a['waiting_reason'] for a in s['apps'] if a['name'] == 'nvme-app']")" = "['no worker carries the labels nvme']" ]; }

start_daemon master "$SPARK_BUILD/spark-master" --config "$tmp/cluster.conf"
start_daemon worker1 "$SPARK_BUILD/spark-worker" --config "$tmp/worker1.conf"
start_daemon worker2 "$SPARK_BUILD/spark-worker" --config "$tmp/worker2.conf"
check "both workers register" wait_until 20 worker_registered

# --- what each worker offers ------------------------------------------------
check_eq "the bad discovery script is logged, naming it" 1 \
        "$(logged RESOURCE_DISCOVERY_FAILED worker2)"
check "... the message names the script and the duplicate" \
        grep -q "discovery script $tmp/find-fpga: duplicate address \"0\"" "$(daemon_log worker2)"
check_eq "worker1 offers its label and two gpu addresses" "[['gpu-node'], {'gpu': ['0', '1']}]" \
        "$(status_py "sorted([[w['labels'], w['resources']] for w in s['workers']], key=str)[0]")"
check_eq "worker2 offers the discovered gpu and no fpga" "[[], {'gpu': ['7']}]" \
        "$(status_py "sorted([[w['labels'], w['resources']] for w in s['workers']], key=str)[1]")"

# --- an app with a constraint and a gpu per executor ------------------------
start_daemon driver1 "$SPARK_BUILD/spark-driver" --config "$tmp/driver1.conf"
check "two executor units start" wait_until 30 units_running 2
check "both register with the driver" wait_until 30 executor_registered driver1 2
check_eq "no third executor: worker1 has two gpus, worker2 lacks the label" 2 "$(n_executor_units)"
check_eq "both executors are on worker1" "['gpu-node', 'gpu-node']" \
        "$(status_py "[[w['labels'][0] if w['labels'] else '-' for w in s['workers'] if w['worker_id'] == e['worker_id']][0] for e in s['executors']]")"
check_eq "each holds one gpu address of its own" "['0', '1']" \
        "$(status_py "sorted(a for e in s['executors'] for a in e['resources']['gpu'])")"
envs=$(for u in $(executor_units); do
        systemctl --user show -p Environment --value "$u" | tr ' ' '\n' | grep '^SPARK_RESOURCE_GPU='
done | sort | tr '\n' ' ')
check_eq "... and finds it in SPARK_RESOURCE_GPU" "SPARK_RESOURCE_GPU=0 SPARK_RESOURCE_GPU=1 " "$envs"
# ProtectClock= of the sandbox adds "char-rtc r" to every unit
devs=$(for u in $(executor_units); do
        systemctl --user show -p DeviceAllow --value "$u" | grep -o '/dev/[^ ]* [rwm]*'
done | sort | tr '\n' ' ')
check_eq "... with its device, and only it, in DeviceAllow=" "/dev/null rw /dev/zero rw " "$devs"
check_eq "... under the sandbox's DevicePolicy" "closed closed " \
        "$(for u in $(executor_units); do systemctl --user show -p DevicePolicy --value "$u"; done | tr '\n' ' ')"

# --- an app whose constraint no worker has waits ----------------------------
start_daemon driver2 "$SPARK_BUILD/spark-driver" --config "$tmp/driver2.conf"
check "the nvme app waits and status says why" wait_until 20 app_waits
check_eq "... with no executor" 2 "$(n_executor_units)"
check "sparkctl status shows the reason" sh -c "'$SPARK_BUILD/sparkctl' --master 'ipc://$tmp/master.sock' status | grep -q 'no worker carries the labels nvme'"

# --- an address is free again only when its unit is gone --------------------
stop_daemon driver1
check "the gpu app's units stop" wait_until 30 sh -c "[ \$(systemctl --user list-units --no-legend --plain 'spark-executor-*' | grep -c active) -eq 0 ]"
# the worker reported the units gone: both addresses serve a new app
start_daemon driver3 "$SPARK_BUILD/spark-driver" --config "$tmp/driver1.conf"
check "a new gpu app gets both addresses again" wait_until 30 units_running 2
check_eq "... 0 and 1, one each" "['0', '1']" \
        "$(status_py "sorted(a for e in s['executors'] for a in e['resources']['gpu'])")"

# --- assigned addresses survive a master restart ------------------------------
held() { status_py "sorted((e['executor_id'], e['resources']['gpu']) for e in s['executors'])"; }
before=$(held)
stop_daemon master
start_daemon master "$SPARK_BUILD/spark-master" --config "$tmp/cluster.conf"
# the restored master places at once what it would place, before it answers
same_after_restart() { [ "$(held 2>/dev/null)" = "$before" ]; }
check "after a master restart each executor holds the same address" wait_until 30 same_after_restart
check_eq "... and the master starts no third executor on them" 2 "$(status_py "len(s['executors'])")"
