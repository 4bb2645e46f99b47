#!/usr/bin/env bash
# Named resources on a real system manager (docs/resources.md): in a booted
# container with the packages installed, the worker finds two fake GPUs with
# a discovery script (device nodes made with /dev/null's and /dev/zero's
# numbers under names of their own), an application asks for one per
# executor, and each executor unit gets its own address in
# SPARK_RESOURCE_GPU and exactly its own node in DeviceAllow=, under the
# sandbox's DevicePolicy=closed; a task sees its address.
. "$(dirname "$0")/lib.sh"
require_system_test_host

H=spark-gpus
ct_boot_one_host $H

check "fake GPU device nodes" ct $H sh -c 'mknod -m 666 /dev/fakegpu0 c 1 3 && mknod -m 666 /dev/fakegpu1 c 1 5'
cat >"$(ct_root $H)/usr/local/lib/find-gpus" <<'EOF'
#!/bin/sh
echo '{"name":"gpu","addresses":["0","1"],"devices":{"0":["/dev/fakegpu0"],"1":["/dev/fakegpu1"]}}'
EOF
chmod 755 "$(ct_root $H)/usr/local/lib/find-gpus"

ct_set $H /etc/spark/worker.conf worker cores 4
ct_set $H /etc/spark/worker.conf worker memory_mb 2048
ct_set $H /etc/spark/worker.conf worker labels '[ "gpu-node" ]'
ct_set $H /etc/spark/worker.conf worker resources '{ gpu = { discovery = "/usr/local/lib/find-gpus"; }; }'
ct_set $H /etc/spark/driver.conf driver app_name '"gpu-app"'
ct_set $H /etc/spark/driver.conf driver executor_memory_mb 256
ct_set $H /etc/spark/driver.conf driver constraints '[ "gpu-node" ]'
ct_set $H /etc/spark/driver.conf driver executor_resources '{ gpu = 1; }'
check "the configuration is valid" ct $H spark-worker --check-config
check "systemctl start spark-master spark-worker spark-driver" \
        ct $H systemctl start spark-master spark-worker spark-driver
check "two executors run, one per GPU" wait_until 60 ct_executors_at_least $H running 2
units=$(ct_executor_units $H)
check_eq "no third: the worker has two GPUs and four cores" 2 "$(echo "$units" | grep -c .)"

check_eq "each unit has its own address" "SPARK_RESOURCE_GPU=0 SPARK_RESOURCE_GPU=1" \
        "$(for u in $units; do ct_prop $H "$u" Environment | tr ' ' '\n' | grep '^SPARK_RESOURCE_GPU='; done | sort | xargs)"
check_eq "... and exactly its own device node in DeviceAllow=" "/dev/fakegpu0 rw /dev/fakegpu1 rw" \
        "$(for u in $units; do ct_prop $H "$u" DeviceAllow | grep -o '/dev/[^ ]* [rwm]*'; done | sort | xargs)"
check_eq "... which matches its address" "0:/dev/fakegpu0 1:/dev/fakegpu1" \
        "$(for u in $units; do
                a=$(ct_prop $H "$u" Environment | tr ' ' '\n' | sed -n 's/^SPARK_RESOURCE_GPU=//p')
                d=$(ct_prop $H "$u" DeviceAllow | grep -o '/dev/fakegpu[0-9]*')
                echo "$a:$d"
        done | sort | xargs)"
check_eq "DevicePolicy=closed stays" "closed closed" \
        "$(for u in $units; do ct_prop $H "$u" DevicePolicy; done | xargs)"
check_match "a task sees its address" '^[01]$' \
        "$(ct $H timeout "$SUBMIT_TIMEOUT" sparkctl submit --name gpu --command 'echo $SPARK_RESOURCE_GPU' --count 1 2>&1)"
check_match "sparkctl status --json shows the addresses held" '"resources":\{"gpu":\["[01]"\]\}' \
        "$(ct $H sparkctl status --json 2>/dev/null)"
