#!/usr/bin/env bash
# One host, as an operator meets the project: a booted systemd container
# (private network), the four .debs installed with dpkg, the daemons started
# unchanged (listening on loopback only), then configured and started
# with systemctl, a job submitted with sparkctl; then the journal, reload
# (a bad file refused by ExecReload=), a worker restart under a running job, a
# second driver instance (refused by ExecStartPre= with a bad file, then killed
# with sparkctl kill-app and not restarted), an upgrade, stopping the driver
# (and the work dirs removed after work_dir_retention_s), and purge.
. "$(dirname "$0")/lib.sh"
require_system_test_host

H=spark-single
V=$(package_version)
APP=

ct_boot $H --private-network

# --- install ----------------------------------------------------------------------
check "dpkg -i installs spark-common, spark-master, spark-worker, spark-driver" \
        ct_install_debs $H spark-common spark-master spark-worker spark-driver
check "sysusers created the spark user" eval "ct $H id spark >/dev/null"
check_eq "the units are installed disabled" "disabled disabled disabled" \
        "$(ct $H systemctl is-enabled spark-master spark-worker spark-driver 2>/dev/null | xargs)"
check_eq "and not started" "inactive inactive inactive" \
        "$(ct $H systemctl is-active spark-master spark-worker spark-driver 2>/dev/null | xargs)"
check "systemd-analyze verify accepts the units (and their Documentation= pages)" ct $H systemd-analyze verify \
        /lib/systemd/system/spark-master.service /lib/systemd/system/spark-worker.service \
        /lib/systemd/system/spark-driver.service /lib/systemd/system/spark-driver@test.service \
        /lib/systemd/system/spark-executors.slice
check_eq "tmpfiles made /var/lib/spark/work" "root 755" "$(ct $H stat -c '%U %a' /var/lib/spark/work)"
for d in master worker driver; do
        check_match "spark-$d --check-config accepts the shipped /etc/spark/$d.conf" "configuration OK" \
                "$(ct $H spark-$d --check-config 2>&1)"
done
check_match "the conf files are conffiles" "/etc/spark/worker.conf" "$(ct $H dpkg-query -W -f='${Conffiles}' spark-worker)"

# --- safe by default: started unchanged, nothing listens beyond loopback ----------------
PORTS="7077 7078 7081 7082 7091 7092"  # every built-in port, the driver's events one too
# listeners LIST: "ADDRESS:PORT" of every TCP listener on the daemons' ports
listeners() {
        ct $H ss -Hltn | awk -v ports=" $PORTS " '{ n = split($4, a, ":"); if (index(ports, " " a[n] " ")) print $4 }' |
                sort -t: -k2 | xargs
}
all_listening() { [ "$(listeners | wc -w)" -ge 5 ]; }
check "the three daemons start with the shipped files unchanged" \
        ct $H systemctl start spark-master spark-worker spark-driver
# (driver.events_listen is not opened by the driver yet)
check "... and listen on their ports" wait_until 20 all_listening
check_eq "on loopback only: no listener on 0.0.0.0 or [::] (ss -ltn)" \
        "127.0.0.1:7077 127.0.0.1:7078 127.0.0.1:7081 127.0.0.1:7082 127.0.0.1:7091" "$(listeners)"
check_eq "nor any warning about cluster.insecure" "" \
        "$(ct $H journalctl --no-pager -q -o cat MESSAGE_ID=60c2b902debc44b6b8a510164d1f53e1)"
no_executors_left() { [ -z "$(ct_executor_units $H)" ]; }
check "they stop again" ct $H systemctl stop spark-driver spark-worker spark-master
# The packaged driver keeps its state (StateDirectory=): stopped, it does not
# unregister, and its executors wait for it to come back.  One that had not
# registered yet when it stopped gives up at its 30 s registration deadline
# (spark-executor(8), "Fate sharing"), the others after three poll intervals.
check "... with no executor left" wait_until 45 no_executors_left
# the rest of the test starts from an empty master
rm -rf "$(ct_root $H)"/var/lib/spark/master/*

# --- configure and start ----------------------------------------------------------
ct_set $H /etc/spark/worker.conf worker cores 3
ct_set $H /etc/spark/worker.conf worker memory_mb 4096
ct_set $H /etc/spark/worker.conf worker work_dir_retention_s 2
ct_set $H /etc/spark/driver.conf driver app_name '"system-test"'
ct_set $H /etc/spark/driver.conf driver executor_memory_mb 256
# A short watchdog, to see the daemons feed it (the shipped units say 30s).
for d in master worker driver; do
        mkdir -p "$(ct_root $H)/etc/systemd/system/spark-$d.service.d"
        printf '[Service]\nWatchdogSec=2s\n' >"$(ct_root $H)/etc/systemd/system/spark-$d.service.d/watchdog.conf"
done
ct $H systemctl daemon-reload
check "systemctl start spark-master spark-worker spark-driver" \
        ct $H systemctl start spark-master spark-worker spark-driver
for d in master worker driver; do
        check "spark-$d is active (Type=notify: READY=1 came)" wait_until 20 ct_is_active $H spark-$d
done
check_match "spark-master's STATUS= counts workers, apps and executors" '^[0-9]+ workers, [0-9]+ apps, [0-9]+ executors$' \
        "$(ct_prop $H spark-master StatusText)"
check_eq "spark-master runs as spark" spark "$(ct $H ps -o user= -p "$(ct_prop $H spark-master MainPID)")"
check_eq "spark-driver runs as spark" spark "$(ct $H ps -o user= -p "$(ct_prop $H spark-driver MainPID)")"
for d in master worker driver; do
        echo "#   systemd-analyze security spark-$d: $(ct $H systemd-analyze security --no-pager spark-$d 2>/dev/null | tail -n 1)"
done
check_eq "StateDirectory= made /var/lib/spark/master for spark" "spark 750" \
        "$(ct $H stat -c '%U %a' /var/lib/spark/master)"

# The sandbox, seen from the running daemons (units/*.service).
proc_field() { ct $H awk -v k="$2:" '$1 == k { print $2 }' "/proc/$(ct_prop $H "$1" MainPID)/status"; }
check_eq "spark-worker keeps only CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_FOWNER (CapBnd)" 000000000000000b \
        "$(proc_field spark-worker CapBnd)"
check_eq "spark-master and spark-driver have no capabilities at all" "0000000000000000 0000000000000000" \
        "$(proc_field spark-master CapBnd) $(proc_field spark-driver CapBnd)"
check_eq "all three run with NoNewPrivs" "1 1 1" \
        "$(for d in master worker driver; do proc_field spark-$d NoNewPrivs; done | xargs)"
in_worker_ns() { ct $H nsenter -t "$(ct_prop $H spark-worker MainPID)" -m "$@"; }
check_fails "the worker cannot write /etc (ProtectSystem=strict)" in_worker_ns touch /etc/spark/probe 2>/dev/null
check "but can write /var/lib/spark/work" in_worker_ns sh -c 'touch /var/lib/spark/work/probe && rm /var/lib/spark/work/probe'
check_eq "nor see into /root (ProtectHome)" "" "$(in_worker_ns ls -A /root)"

watchdog_fed() {
        local unit=$1 t0=$2
        [ "$(ct_prop $H "$unit" WatchdogTimestampMonotonic)" -gt "$t0" ] 2>/dev/null
}
for d in master worker driver; do
        t0=$(ct_prop $H spark-$d WatchdogTimestampMonotonic)
        check "spark-$d feeds its watchdog (WATCHDOG=1 within 2 s)" wait_until 3 watchdog_fed spark-$d "$t0"
done

app_known() { APP=$(ct_app_id $H system-test) && [ -n "$APP" ]; }
check "the driver registered its application" wait_until 20 app_known
check "the worker's 3 configured cores became 3 running executors" wait_until 30 ct_executors_at_least $H running 3
echo "# application $APP"
status_says() { ct_prop $H "$1" StatusText | grep -Eq -- "$2"; }
check "spark-master's STATUS= says 1 workers, 1 apps, 3 executors" wait_until 5 status_says spark-master '^1 workers, 1 apps, 3 executors$'
check "spark-worker's STATUS= says it is registered with 3 executors" wait_until 5 status_says spark-worker 'registered, 3 executors'
check "spark-driver's STATUS= names the application and its 3 executors" wait_until 5 status_says spark-driver "$APP: 3 executors"
check_eq "the executors are units in spark-executors.slice" "spark-executors.slice" \
        "$(for u in $(ct_executor_units $H); do ct_prop $H "$u" Slice; done | sort -u | xargs)"
check_eq "executors run as the application's dynamic user (executor_user \"dynamic\")" "spark-$APP" \
        "$(for u in $(ct_executor_units $H); do
        ct $H ps -o user:40= -p "$(ct_prop $H "$u" MainPID)"; done | sort -u | xargs)"

# --- a job --------------------------------------------------------------------------
out=$(ct $H timeout $SUBMIT_TIMEOUT sparkctl submit --name hello --command 'echo task {#}: {}' --inputs - <<<"$(seq 100 129)" 2>&1)
check_eq "sparkctl submit: 30 command tasks, outputs in task order" \
        "$(for i in $(seq 0 29); do echo "task $i: $((100 + i))"; done)" "$out"
PI_LIB=$(ls "$SYSTEM_PACKAGES"/deb/spark-deploy-*/build/examples/sparkpi.so 2>/dev/null | head -n 1)
if [ -n "$PI_LIB" ]; then
        cp "$PI_LIB" "$(ct_root $H)/var/tmp/sparkpi.so"
        out=$(ct $H timeout $SUBMIT_TIMEOUT sparkctl submit --name sparkpi --function /var/tmp/sparkpi.so:sparkpi --count 6 --arg 200000 2>&1)
        check_match "a function job (SparkPi, the .so shipped with the job) runs in the executor units" \
                '^[0-9]+ [0-9]+' "$out"
fi

# --- the master's state, saved by a child process inside the unit's sandbox ------------
master_metric() {
        ct $H curl -fsS http://127.0.0.1:8080/metrics | awk -v k="$1" '$1 == k { print $2 }'
}
saved_in_child() { [ "$(master_metric 'spark_master_state_saves_total{result="ok"}')" -ge 2 ] 2>/dev/null; }
check "the master saved its state again after the start, from a child process (its seccomp filter allows it)" \
        wait_until 10 saved_in_child
check_eq "... and no save failed" "0" "$(master_metric 'spark_master_state_saves_total{result="failed"}')"
check_eq "... nor fell back to saving on the loop" "" \
        "$(ct $H journalctl --no-pager -q -o cat -u spark-master | grep 'process to save the state')"

# --- the journal ----------------------------------------------------------------------
check "journalctl -u 'spark-executor-*' shows the executors' own lines" \
        wait_until 10 ct_journal_grep $H 'spark-executor-*' "Registered with driver .* as executor [0-9]+ of $APP"
story_units() {
        ct $H journalctl --no-pager -q -o json "SPARK_APP_ID=$APP" |
                python3 -c '
import json, re, sys
units = set()
for line in sys.stdin:
    u = json.loads(line).get("_SYSTEMD_UNIT", "")
    units.add(re.sub(r"^spark-executor-.*\.service$", "spark-executor-*", u))
print(" ".join(sorted(units)))'
}
story_complete() {
        [ "$(story_units)" = "spark-driver.service spark-executor-* spark-master.service spark-worker.service" ]
}
check "journalctl SPARK_APP_ID=$APP: master, worker, driver and executor units (LogExtraFields)" \
        wait_until 10 story_complete
echo "#   units in the app's story: $(story_units)"
check_match "the story has the key events' MESSAGE_IDs" "3a8034a69c924a579c59dedf5e8d2088" \
        "$(ct $H journalctl --no-pager -q -o verbose "SPARK_APP_ID=$APP" | grep -o 'MESSAGE_ID=.*' | sort -u)"

# --- reload ---------------------------------------------------------------------------
ct_set $H /etc/spark/master.conf master worker_timeout_ms 15000
ct $H systemctl reload spark-master
check "systemctl reload spark-master applies a changed key" wait_until 10 ct_journal_grep $H spark-master \
        "Reload: .*worker_timeout_ms changed from 10000 to 15000"
cp "$(ct_root $H)/etc/spark/master.conf" "$TEST_TMPDIR/master.conf.good"
echo 'master: { worker_timeout_ms = "soon"; };' >>"$(ct_root $H)/etc/spark/master.conf"
pid=$(ct_prop $H spark-master MainPID)
check_fails "systemctl reload spark-master fails on a bad file (ExecReload= runs --check-config first)" \
        ct $H systemctl reload spark-master
check "the journal names the file and line" wait_until 10 ct_journal_grep $H spark-master \
        "/etc/spark/master.conf:[0-9]+: duplicate setting name"
check_eq "and the master goes on with its settings (same MainPID, never sent SIGHUP)" "$pid active" \
        "$(ct_prop $H spark-master MainPID) $(ct $H systemctl is-active spark-master)"
check_fails "... it logged no reload" ct_journal_grep $H spark-master "Reload of .*master.conf failed"
cp "$TEST_TMPDIR/master.conf.good" "$(ct_root $H)/etc/spark/master.conf"

# --- worker restart under a running job -------------------------------------------------
before=$(ct_executor_pids $H)
ct $H timeout $SUBMIT_TIMEOUT sparkctl submit --name during-restart --command 'sleep 0.2; echo {#}' --count 45 \
        >"$TEST_TMPDIR/restart.out" 2>"$TEST_TMPDIR/restart.err" &
job=$!
sleep 1
worker_pid=$(ct_prop $H spark-worker MainPID)
check "systemctl restart spark-worker" ct $H systemctl restart spark-worker
check "spark-worker is active again with a new MainPID" \
        test "$(ct $H systemctl is-active spark-worker)/$(ct_prop $H spark-worker MainPID)" != "active/$worker_pid"
check_eq "its executors kept running: same units, same MainPIDs" "$before" "$(ct_executor_pids $H)"
check "the new worker re-adopted them" wait_until 10 ct_journal_grep $H spark-worker "Adopted 3 running executors"
wait $job
check_eq "the job running across the restart completed, every result once" "$(seq 0 44)" \
        "$(cat "$TEST_TMPDIR/restart.out")"
check "the master still counts 3 running executors" wait_until 10 ct_executors_at_least $H running 3

# --- spark-driver@NAME -----------------------------------------------------------------
echo 'driver: { max_cores = -1; };' >"$(ct_root $H)/etc/spark/driver-second.conf"
check_fails "spark-driver@second does not start with a bad driver-second.conf (ExecStartPre= --check-config)" \
        ct $H systemctl start spark-driver@second
check "the journal names the file and the key" wait_until 10 ct_journal_grep $H spark-driver@second \
        "driver-second.conf:1: driver.max_cores: value -1 out of range"
check_eq "and the driver itself never ran (ExecMainPID=0)" 0 "$(ct_prop $H spark-driver@second ExecMainPID)"
# (systemd restarts a unit whose ExecStartPre= failed, up to its start limit:
# stop it, which also clears its restart count)
ct $H systemctl stop spark-driver@second
ct $H systemctl reset-failed spark-driver@second
sed -e 's/app_name = "system-test"/app_name = "second"/' -e 's/:7091"/:7093"/' -e 's/:7092"/:7094"/' \
        "$(ct_root $H)/etc/spark/driver.conf" >"$(ct_root $H)/etc/spark/driver-second.conf"
check "systemctl start spark-driver@second (reads driver-second.conf)" ct $H systemctl start spark-driver@second
SECOND=
second_known() { SECOND=$(ct_app_id $H second) && [ -n "$SECOND" ]; }
check "its application 'second' registered" wait_until 20 second_known
check_match "its command line names the instance's configuration" "--config-name driver-second" \
        "$(ct_prop $H spark-driver@second ExecStart)"
# kill-app stops the driver for good: exit 79, in RestartPreventExitStatus=.
check "sparkctl kill-app $SECOND" ct $H sparkctl kill-app "$SECOND"
second_status() { [ "$(ct_prop $H spark-driver@second ExecMainStatus)" = "$1" ]; }
check "spark-driver@second exits with status 79" wait_until 10 second_status 79
sleep 4  # twice RestartSec=
check_eq "and systemd does not restart it (failed, 0 restarts)" "failed 0" \
        "$(ct $H systemctl is-active spark-driver@second) $(ct_prop $H spark-driver@second NRestarts)"
ct $H systemctl reset-failed spark-driver@second
rm -f "$(ct_root $H)/etc/spark/driver-second.conf"

# --- upgrade ----------------------------------------------------------------------------
# A bumped version of the same packages, whose worker.conf changed too (a
# new comment): dpkg then has the operator's edit against the package's new
# file, and an unattended upgrade (--force-confdef --force-confold) keeps the
# edit and puts the new file beside it.  master.conf (edited by the reload
# test above) did not change in the package: it is kept without a word.
V2="$V+systest1"
mkdir -p "$(ct_root $H)/var/tmp/spark-debs2"
for p in spark-common spark-master spark-worker spark-driver; do
        x=$TEST_TMPDIR/repack-$p
        rm -rf "$x" && dpkg-deb -R "$SYSTEM_PACKAGES/${p}_${V}_"*.deb "$x"
        sed -i -e "s/^Version: .*/Version: $V2/" -e "s/(= $V)/(= $V2)/g" "$x/DEBIAN/control"
        [ $p != spark-worker ] || echo "# (added in $V2)" >>"$x/etc/spark/worker.conf"
        dpkg-deb -b "$x" "$(ct_root $H)/var/tmp/spark-debs2/${p}_${V2}_amd64.deb" >/dev/null
done
grep -Eq '^[[:space:]]*cores = 3;' "$(ct_root $H)/etc/spark/worker.conf" || fail "setup: worker.conf lost its edit before the upgrade"
grep -Eq '^[[:space:]]*worker_timeout_ms = 15000;' "$(ct_root $H)/etc/spark/master.conf" ||
        fail "setup: master.conf lost its edit before the upgrade"
master_pid=$(ct_prop $H spark-master MainPID)
worker_pid=$(ct_prop $H spark-worker MainPID)
driver_pid=$(ct_prop $H spark-driver MainPID)
before=$(ct_executor_pids $H)
check "dpkg -i upgrades all four packages to $V2" ct_dpkg $H --force-confdef --force-confold \
        -i $(cd "$(ct_root $H)" && ls var/tmp/spark-debs2/*.deb | sed "s,^,/,")
check_eq "dpkg knows them at $V2" "$V2 $V2 $V2 $V2" \
        "$(ct $H dpkg-query -W -f='${Version} ' spark-common spark-master spark-worker spark-driver | xargs)"
check "the edited worker.conf was kept" grep -Eq '^[[:space:]]*cores = 3;' "$(ct_root $H)/etc/spark/worker.conf"
check "and the package's new one put beside it as worker.conf.dpkg-dist" \
        grep -q "added in $V2" "$(ct_root $H)/etc/spark/worker.conf.dpkg-dist"
check "the edited master.conf was kept" grep -Eq '^[[:space:]]*worker_timeout_ms = 15000;' \
        "$(ct_root $H)/etc/spark/master.conf"
check_eq "with nothing beside it" "worker.conf.dpkg-dist" "$(ls "$(ct_root $H)/etc/spark" | grep dpkg)"
rm -f "$(ct_root $H)/etc/spark/worker.conf.dpkg-dist"
check "the running master was restarted" test "$(ct_prop $H spark-master MainPID)" != "$master_pid"
check "the running worker was restarted" test "$(ct_prop $H spark-worker MainPID)" != "$worker_pid"
check_eq "the driver was left running (its jobs would end)" "$driver_pid" "$(ct_prop $H spark-driver MainPID)"
# The worker keeps its executors across a restart, and the master its
# state (apps, workers, executors in /var/lib/spark/master, docs/DESIGN.md §9).
check_eq "the executors survived the upgrade (same units, same MainPIDs)" "$before" "$(ct_executor_pids $H)"
check "the master kept its state in its StateDirectory" test -n "$(ls -A "$(ct_root $H)/var/lib/spark/master")"
for d in master worker driver; do
        check "spark-$d is active after the upgrade" wait_until 20 ct_is_active $H spark-$d
done
job_after_upgrade() {
        [ "$(ct $H timeout $SUBMIT_TIMEOUT sparkctl submit --command 'echo {#}' --count 10 2>/dev/null)" = "$(seq 0 9)" ]
}
check "a job runs after the upgrade" wait_until 30 job_after_upgrade

# --- stopping the driver --------------------------------------------------------------
no_executor_units() { [ -z "$(ct_executor_units $H)" ]; }
check "systemctl stop spark-driver" ct $H systemctl stop spark-driver
check "then no executor unit is left" wait_until 20 no_executor_units
check "the master logged the application's removal" wait_until 10 ct_journal_grep $H spark-master "$APP"
# executor_user "dynamic": the files are under /var/lib/private, behind links
app_dirs() { ls -d "$(ct_root $H)/var/lib/spark/work/$APP" "$(ct_root $H)/var/lib/private/spark/work/$APP" 2>/dev/null; }
check "the application's work dirs (and the dynamic user's files) are removed after work_dir_retention_s" \
        wait_until 15 eval '[ -z "$(app_dirs)" ]'
check "the worker logged it" ct_journal_grep $H spark-worker "Removed the work dirs of $APP"

# --- purge -------------------------------------------------------------------------------
rm -rf "$(ct_root $H)"/etc/systemd/system/spark-*.service.d    # the test's own drop-ins
check "dpkg --purge removes the four packages" \
        ct_dpkg $H --purge spark-driver spark-worker spark-master spark-common
check_eq "dpkg knows none of them" "" \
        "$(ct $H dpkg-query -W -f='${db:Status-Abbrev}${Package}\n' 'spark-*' 2>/dev/null | grep -v '^un' || true)"
left=$(cd "$(ct_root $H)" && ls -d etc/spark var/lib/spark var/lib/private/spark usr/sbin/spark-* usr/bin/sparkctl usr/bin/spark-tls usr/lib/spark \
        lib/systemd/system/spark-* usr/lib/sysusers.d/spark.conf usr/lib/tmpfiles.d/spark*.conf \
        etc/systemd/system/multi-user.target.wants/spark-* 2>/dev/null || true)
check_eq "nothing of them is left on disk (/etc/spark, /var/lib/spark, programs, units)" "" "$left"
check_eq "no spark unit is loaded" "" \
        "$(ct $H systemctl list-units --all --plain --no-legend 'spark-*' 2>/dev/null | grep -v not-found || true)"
