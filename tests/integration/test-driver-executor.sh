#!/usr/bin/env bash
# The driver and its executors against the real systemd user manager: a
# master, two workers and a driver; function jobs through sparkctl; and each
# way an executor gets lost — SIGKILL (socket disconnect), SIGSTOP
# (heartbeat timeout), `systemctl stop` (the worker's unit-stop event) —
# with every result delivered exactly once.
# shellcheck source=tests/harness/lib.sh
. "$(dirname "$0")/../harness/lib.sh"
require_user_manager

tmp=$(harness_tmpdir)
require_task_lib

real_driver_conf driver-test 'cores_per_executor = 1; executor_memory_mb = 256; task_max_failures = 4;
          executor_heartbeat_timeout_ms = 3000; locality_wait_ms = 0;'
stop_user_units_on_exit 'spark-executor-*'

sparkctl() { "$SPARK_BUILD/sparkctl" --master "ipc://$tmp/master.sock" --driver "$(driver_url driver-test)" "$@"; }
executor_units() { systemctl --user list-units --no-legend --plain 'spark-executor-*' | awk '$3 == "active" { print $1 }'; }
n_executor_units() { executor_units | wc -l; }
units_running() { [ "$(n_executor_units)" -ge "$1" ]; }
no_units() { [ "$(n_executor_units)" -eq 0 ]; }
driver_log_has() { grep -Eq "$1" "$(daemon_log driver)"; }

real_cluster 2 --heartbeat-ms 500 --master 'worker_timeout_ms = 3000;'
start_real_driver driver-test driver
check "four executor units start" wait_until 30 units_running 4
check "every executor registers with the driver" wait_until 30 executor_registered 4

# --- a plain job: 2,000 tasks, 2,000 correct results in order -------------
square_inputs 2000
rc=0
sparkctl submit --function "$lib:square" --inputs "$tmp/numbers" >"$tmp/out1" 2>"$tmp/err1" || rc=$?
check_eq "2,000 function tasks succeed" 0 "$rc"
check "... with 2,000 correct results in task order" cmp -s "$tmp/squares" "$tmp/out1"

# --- only the executors the master started may register -------------------
# Someone starting spark-executor by hand must not get the app's tasks.
# Every registration carries the executor's secret (an HMAC of the app and
# executor ids under the driver's key), which only the worker that launched
# that executor could write: without one, or with executor 1's secret for
# another id, the driver refuses at once.  And with executor 1's own secret
# (read from its worker, as root can) from another worker, the driver still
# knows where the master started executor 1.
app=$(sed -n 's/.*Application \(app-[0-9]*-[0-9]*\) .*registered.*/\1/p' "$(daemon_log driver)" | head -n 1)
worker=$(sed -n 's/.*Executor 1 registered.* worker=\([^] ]*\).*/\1/p' "$(daemon_log driver)" | head -n 1)
secret1=$(ls "$XDG_RUNTIME_DIR"/spark-worker/secrets/*/"spark-executor-$app-1.service" 2>/dev/null | head -n 1)
check "executor 1's secret is a 32-byte file only root may read" \
        test "$(stat -c '%s %a %U' "$secret1" 2>/dev/null)" = "32 400 root"
check_eq "... in a directory only root may enter" 700 "$(stat -c %a "$(dirname "$secret1")" 2>/dev/null)"
mkdir -p "$tmp/creds1" "$tmp/creds-none"
cp "$secret1" "$tmp/creds1/spark-executor-secret"
rogue() {
        local creds=$1
        shift
        mkdir -p "$tmp/rogue"
        CREDENTIALS_DIRECTORY=$creds timeout 3 "$SPARK_BUILD/spark-executor" --driver "$(driver_url driver-test)" \
                --app-id "$app" --cores 1 --work-dir "$tmp/rogue" "$@"
}
rc=0
rogue "" --executor-id 999 --worker-id "$worker" >"$tmp/rogue1.log" 2>&1 || rc=$?
check_eq "an executor without a secret is refused at once (exit 1)" 1 "$rc"
check_match "... told why" "registration as executor 999 of $app refused: no executor secret" "$(cat "$tmp/rogue1.log")"
check_eq "... and it never registered" 0 "$(logged EXECUTOR_REGISTERED driver executor=999)"
rc=0
rogue "$tmp/creds1" --executor-id 2 --worker-id "$worker" >"$tmp/rogue3.log" 2>&1 || rc=$?
check_eq "executor 1's secret replayed as executor 2 is refused at once (exit 1)" 1 "$rc"
check_match "... told why" "registration as executor 2 of $app refused: wrong executor secret" "$(cat "$tmp/rogue3.log")"
check "... and the driver logs it" driver_log_has "Refused a registration as executor 2 of $app: a wrong executor secret"
check_eq "... while executor 2 stays registered once" 1 "$(logged EXECUTOR_REGISTERED driver executor=2)"
hostile=$SPARK_BUILD/tests/helpers/hostile-client
check_match "a poll as executor 2 with executor 1's secret is refused" \
        "^error -1 poll as executor 2 of $app refused: wrong executor secret" \
        "$("$hostile" "$(driver_url driver-test)" send poll app_id="$app" executor_id=2 secret=@"$secret1")"
check_match "... and one without a secret" "^error -1 poll as executor 1 of $app refused: no executor secret" \
        "$("$hostile" "$(driver_url driver-test)" send poll app_id="$app" executor_id=1)"
rc=0
rogue "$tmp/creds1" --executor-id 1 --worker-id worker-20261129000000-impostor-1 >"$tmp/rogue2.log" 2>&1 || rc=$?
check_eq "a launched executor id from another worker is refused at once (exit 1)" 1 "$rc"
check_match "... naming the worker it was started on" "executor 1 of $app was started on worker $worker" \
        "$(cat "$tmp/rogue2.log")"
check "... and the driver says so" driver_log_has "Refused executor 1 from .*: the master started it on worker $worker"
check_eq "... while executor 1 stays registered once" 1 "$(logged EXECUTOR_REGISTERED driver executor=1)"

# run_job_with NAME INJECT: submits 2,000 slow tasks (--json), runs INJECT once
# the job is under way, and checks each task's result arrived once and right.
run_job_with() {
        local name=$1 inject=$2 rc=0 job
        sparkctl submit --json --name "$name" --function "$lib:slow_square" --inputs "$tmp/numbers" \
                >"$tmp/$name.json" 2>"$tmp/$name.err" &
        local submit=$!
        check "$name: the job is under way" wait_until 20 job_running "$name"
        $inject
        wait $submit || rc=$?
        check_eq "$name: the job succeeds" 0 "$rc"
        check_square_results "$name" "$tmp/$name.json"
}
job_running() { sparkctl jobs | grep -E "^job-[0-9]+ +$1 +running" | grep -Eq ' [1-9][0-9]*/2000 '; }
first_unit() { executor_units | head -n 1; }
unit_pid() { systemctl --user show -p MainPID --value "$1"; }

# --- SIGKILL an executor: its socket disconnects ---------------------------
kill_executor() {
        victim=$(first_unit)
        systemctl --user kill -s KILL "$victim"
}
run_job_with kill-job kill_executor
# first or after the unit-stop event ("already lost: ... also: ..."): each
# path is logged, whichever wins
check "the driver saw the socket disconnect of the killed executor" \
        wait_for driver_log_has "(lost|also): socket disconnected"
check "... and its unit-stop event named the signal" \
        wait_for driver_log_has "unit $victim stopped: .*signal KILL"
check "the master replaces the lost executor" wait_until 30 units_running 4

# --- SIGSTOP an executor: declared lost after the heartbeat timeout --------
stop_executor() {
        victim=$(first_unit)
        victim_pid=$(unit_pid "$victim")
        kill -STOP "$victim_pid"
}
run_job_with stop-job stop_executor
check "the frozen executor was declared lost by heartbeat timeout" \
        driver_log_has "lost: no poll for [0-9]+ ms \(heartbeat timeout\)"
check "the driver had the frozen executor's unit stopped (no SIGCONT needed)" \
        wait_until 20 bash -c "! systemctl --user is-active -q $victim"
check "... through the master, on request" wait_for driver_log_has "unit $victim stopped: stopped on request"
kill -CONT "$victim_pid" 2>/dev/null || true
check "the master replaces it" wait_until 30 units_running 4

# --- systemctl stop an executor unit: the unit-stop event names why -------
stop_unit() {
        victim=$(first_unit)
        systemctl --user stop "$victim"
}
run_job_with unit-stop-job stop_unit
check "the driver's log names the unit-stop reason" \
        wait_for driver_log_has "unit $victim stopped: "
check "the master replaces it" wait_until 30 units_running 4

# --- retries ---------------------------------------------------------------
rc=0
sparkctl submit --json --function "$lib:third_time_lucky" --count 3 >"$tmp/lucky.json" 2>&1 || rc=$?
check_eq "a task failing twice then succeeding: the job succeeds" 0 "$rc"
check_eq "... each task took 3 attempts" 3 "$(grep -c '"attempts":3' "$tmp/lucky.json")"
check_match "... and returned the third attempt's output" '"status":"ok".*lucky on attempt 3' "$(head -n 1 "$tmp/lucky.json")"

rc=0
sparkctl submit --json --function "$lib:always_fail" --count 1 >"$tmp/fail.json" 2>&1 || rc=$?
check_eq "a task that always fails fails the job (exit 1)" 1 "$rc"
for a in 1 2 3 4; do
        check_match "... with the reason of attempt $a" "boom on attempt $a" "$(cat "$tmp/fail.json")"
done
check_match "... after task_max_failures = 4 attempts" '"attempts":4' "$(cat "$tmp/fail.json")"

# --- stopping the driver takes its executors with it ----------------------
stop_daemon driver TERM
check_eq "the driver unregistered its application" 1 "$(logged APP_REMOVED driver app="$app")"
check "no spark-executor unit is left" wait_until 20 no_units
secret_files() { find "$XDG_RUNTIME_DIR/spark-worker/secrets" -type f -name "spark-executor-$app-*" 2>/dev/null | wc -l; }
no_secret_files() { [ "$(secret_files)" -eq 0 ]; }
# on failure: which secrets are left, and what the workers said of those
# executors (worker1's log is replaced when it restarts below)
show_left_secrets() {
        local f id
        for f in $(find "$XDG_RUNTIME_DIR/spark-worker/secrets" -type f -name "spark-executor-$app-*" 2>/dev/null); do
                id=${f##*-} id=${id%.service}
                echo "# left: $f"
                grep -h -E "$app/$id[^0-9]|executor=$id[^0-9]|$app-$id\.service" \
                        "$(daemon_log worker1)" "$(daemon_log worker2)" | tail -n 12 | sed 's/^/#   /'
        done
}
if wait_until 10 no_secret_files; then
        pass "... nor any executor's secret file (removed as each unit ended)"
else
        fail "... nor any executor's secret file (removed as each unit ended)"
        show_left_secrets
fi

# --- a restarted worker removes the secrets of units that are gone ----------
w1secrets=$XDG_RUNTIME_DIR/spark-worker/secrets/$(sed 's/[^A-Za-z0-9._-]/_/g' <<<"ipc://$tmp/worker1.sock")
stop_daemon worker1
check_eq "worker1's secrets directory is root's, mode 0700" "700 root" "$(stat -c '%a %U' "$w1secrets" 2>/dev/null)"
head -c 32 /dev/urandom >"$w1secrets/spark-executor-$app-77.service"
start_daemon worker1 "$SPARK_BUILD/spark-worker" --config "$tmp/worker1.conf"
stale_gone() { [ ! -e "$w1secrets/spark-executor-$app-77.service" ]; }
check "a restarted worker removes a secret whose unit is gone" wait_until 10 stale_gone
