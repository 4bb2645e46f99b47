#!/usr/bin/env bash
# The executor sandbox (spark-worker(8), "Executor sandbox") against a
# hostile job: in a booted container with the packages installed, command
# tasks of two applications try what a job must not do (read the hosts' TLS
# keys, write the master's or the worker's state, read the other
# application's work dir, find a key path in their environment, register a
# worker of their own with the master, kill the other application or submit
# jobs to either driver) and each attempt fails.  Also
# systemd-analyze security of a live executor unit.
. "$(dirname "$0")/lib.sh"
require_system_test_host

H=spark-sandbox
ct_boot_one_host $H

# Keys as an operator keeps them: readable by the spark daemons only.
ct $H sh -c 'mkdir -p /etc/spark/tls && cd /etc/spark/tls &&
        for k in ca node; do openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out $k.key 2>/dev/null; done &&
        chown root:spark ca.key node.key && chmod 0640 ca.key node.key'

ct_set $H /etc/spark/worker.conf worker cores 2
ct_set $H /etc/spark/worker.conf worker memory_mb 2048
ct_set $H /etc/spark/driver.conf driver app_name '"hostile-1"'
ct_set $H /etc/spark/driver.conf driver executor_memory_mb 256
ct_set $H /etc/spark/driver.conf driver max_cores 1
sed -e 's/app_name = "hostile-1"/app_name = "hostile-2"/' -e 's/:7091"/:7093"/' -e 's/:7092"/:7094"/' \
        "$(ct_root $H)/etc/spark/driver.conf" >"$(ct_root $H)/etc/spark/driver-two.conf"
check "systemctl start spark-master spark-worker spark-driver spark-driver@two" \
        ct $H systemctl start spark-master spark-worker spark-driver spark-driver@two
apps_known() { A1=$(ct_app_id $H hostile-1) && A2=$(ct_app_id $H hostile-2) && [ -n "$A1" ] && [ -n "$A2" ]; }
check "both applications registered" wait_until 30 apps_known
check "each has its executor running" wait_until 30 ct_executors_at_least $H running 2
echo "# applications $A1 and $A2"
D2=$(ct $H awk -F'"' '/^[[:space:]]*listen/ { print $2 }' /etc/spark/driver-two.conf)

# one_task APP-DRIVER-URL SHELL: runs SHELL as the one task of a job of the
# application behind the driver; its output.
one_task() {
        ct $H timeout "$SUBMIT_TIMEOUT" sparkctl --driver "$1" submit --name hostile --command "$2" --count 1 2>&1
}
D1=tcp://127.0.0.1:7091
[ -n "$D2" ] || D2=tcp://127.0.0.1:7093

unit1=$(ct_executor_units $H | grep -F "$A1" | head -n 1)
unit2=$(ct_executor_units $H | grep -F "$A2" | head -n 1)
check_eq "the executors run as their applications' dynamic users" "spark-$A1 spark-$A2" \
        "$(for u in $unit1 $unit2; do ct $H ps -o user:40= -p "$(ct_prop $H "$u" MainPID)"; done | xargs)"
check_eq "DynamicUser=yes" "yes yes" "$(for u in $unit1 $unit2; do ct_prop $H "$u" DynamicUser; done | xargs)"

# A task that does what it may: write its own work dir and its private /tmp.
check_eq "a task writes its work dir and its own /tmp" "ok" \
        "$(one_task $D1 'echo x >mine && echo x >/tmp/mine && cat mine /tmp/mine >/dev/null && echo ok')"

try() {   # try DESCRIPTION DRIVER SHELL: SHELL prints "refused" when it fails
        check_eq "$1" refused "$(one_task "$2" "$3 >/dev/null 2>&1 && echo ALLOWED || echo refused")"
}
try "a task cannot read /etc/spark/tls/node.key" $D1 'cat /etc/spark/tls/node.key'
try "nor /etc/spark/tls/ca.key" $D1 'cat /etc/spark/tls/ca.key'
try "nor write under /var/lib/spark/master" $D1 'touch /var/lib/spark/master/evil'
try "nor list /var/lib/spark/master" $D1 'ls /var/lib/spark/master/.'
try "nor write the worker's state dir /var/lib/spark/work" $D1 'touch /var/lib/spark/work/evil'
try "nor write /etc" $D1 'touch /etc/evil'
W1=$(ct $H sh -c "readlink -f /var/lib/spark/work/$A1/1")
echo "# $A1's work dir: $W1"
try "a task of $A2 cannot list $A1's work dir" $D2 "ls /var/lib/spark/work/$A1/1/."
try "nor read a file there" $D2 "cat /var/lib/spark/work/$A1/1/mine"
try "nor reach it under /var/lib/private" $D2 "ls /var/lib/private/spark/work/$A1/1/."
check_eq "the file is there, for $A1's own tasks" "x" "$(one_task $D1 'cat mine')"
check_eq "no SPARK_TLS_* (a key path) in a task's environment" "" \
        "$(one_task $D1 'env | grep "^SPARK_TLS_" | cut -d= -f1')"
check_eq "a task has no capabilities and cannot gain any (CapBnd, NoNewPrivs)" "0000000000000000 1" \
        "$(one_task $D1 'grep -E "^(CapBnd|NoNewPrivs):" /proc/self/status | cut -f2 | xargs')"
try "nor see other users' processes (ProtectProc=invisible)" $D1 '[ -e /proc/1/status ]'

# The cluster's requests, on the plaintext loopback endpoints of a single
# host: a task's connection belongs to its application's dynamic user, and
# the daemons refuse that user what needs a role (docs/security.md).
try "a task cannot kill the other application (sparkctl kill-app)" $D1 "sparkctl kill-app $A2"
try "nor submit a job to the other application's driver" $D1 "sparkctl --driver $D2 submit --command true --count 1"
try "nor submit one to its own driver" $D1 "sparkctl --driver $D1 submit --command true --count 1"
check_eq "the other application still runs" "$A2" "$(ct_app_id $H hostile-2)"
refusals() { ct $H journalctl -q -o cat MESSAGE_ID=f84ae17c40cb4abbb33a6b1871b84391 | grep -c "is not for a job's tasks: uid 6" || true; }
check "the master and the drivers logged each refusal with the task's uid" test "$(refusals)" -ge 3

# Registering a worker of its own: the installed spark-worker, run by the task
# with a configuration of the task's making.
n_workers() { ct $H sparkctl status --json 2>/dev/null | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["workers"]))'; }
check_eq "one worker before" 1 "$(n_workers)"
# (@include takes relative paths only: the task copies cluster.conf.)  Its
# last lines say how far it got.
one_task $D1 'cp /etc/spark/cluster.conf . && printf "@include \"cluster.conf\"\nworker: { listen = \"tcp://127.0.0.1:7181\"; events_listen = \"tcp://127.0.0.1:7182\"; systemd_bus = \"system\"; work_dir = \"$PWD/w\"; };\n" >w.conf && timeout 30 /usr/sbin/spark-worker --config w.conf 2>&1 | tail -n 4' |
        sed 's/^/#   /'
check_eq "a task cannot register a worker with the master" 1 "$(n_workers)"

# --- systemd-analyze security -----------------------------------------------
score() {
        ct $H systemd-analyze security --no-pager "$1" 2>/dev/null | grep 'Overall exposure level' |
                grep -Eo '[0-9]+\.[0-9]+ [A-Z]+' | head -n 1
}
s=$(score "$unit1")
echo "#   systemd-analyze security $unit1: $s"
check "a live executor unit's exposure is 3.5 or less" awk -v s="${s%% *}" 'BEGIN { exit !(s != "" && s + 0 <= 3.5) }'
# For comparison, a unit with only what executor units had before the sandbox.
ct $H systemd-run -q --unit=spark-unsandboxed -p User=spark -p Type=exec -p MemoryMax=256M sleep 60
echo "#   the same without the sandbox (User=spark, MemoryMax=): $(score spark-unsandboxed.service)"
ct $H systemctl stop spark-unsandboxed.service 2>/dev/null
