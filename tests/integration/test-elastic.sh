#!/usr/bin/env bash
# Elastic executors (driver.dynamic_allocation, docs/elastic.md): a master,
# two workers of 2 cores on the test's systemd user manager, and a driver
# with min_executors = 0, a short idle timeout and a short backlog timeout.
#
#  1. Registered, the application holds no executor and wants none.
#  2. A job of 12 tasks of 0.4 s: the first task asks for an executor at
#     once, the backlog grows the app beyond 1 executor, and the job
#     succeeds with every result exactly once, each from its first attempt.
#  3. Idle, every executor is released: the master shows 0 live executors,
#     wanted 0, and no executor unit is left.
#  4. A second job brings an executor back and succeeds, every result once.
#  5. Bad releases (an id the app never had, an unknown app, no ids, a
#     hostile app id) and an elastic registration asking for -1 executors
#     get a clear error and change nothing.
# shellcheck source=tests/harness/lib.sh
. "$(dirname "$0")/../harness/lib.sh"
require_real_cluster

T=$(harness_tmpdir)
SPARKCTL=$SPARK_BUILD/sparkctl
HC=$SPARK_BUILD/tests/helpers/hostile-client
[ -x "$HC" ] || skip_all "the test helpers are not built (make test-helpers)"

sparkctl_driver_conf elastic-test 'cores_per_executor = 1; executor_memory_mb = 256; task_max_failures = 1; locality_wait_ms = 0;
          dynamic_allocation = true; min_executors = 0; executor_idle_timeout_ms = 1500;
          backlog_timeout_ms = 200;'

app_json() {
        "$SPARKCTL" status --json 2>/dev/null | jq -c '.apps[0] // empty'
}
app_field() {
        app_json | jq -r ".$1"
}
live_is() {
        [ "$(app_field executors_live)" = "$1" ]
}
live_at_least() {
        [ "$(app_field executors_live)" -ge "$1" ]
}
# executor units of the test's app still active (or on their way)
active_units() {
        user_units --state=active,activating,deactivating,reloading 'spark-executor-*' | wc -l
}
no_units() {
        [ "$(active_units)" = 0 ]
}
registered_executors() {
        logged EXECUTOR_REGISTERED driver
}
released_logged() {
        [ "$(logged EXECUTORS_RELEASED driver)" -ge "$1" ]
}

stop_user_units_on_exit 'spark-executor-*'
real_cluster 2 --memory-mb 1024 --master 'spread_out = true;'
start_real_driver elastic-test driver
check "the driver registers its application" wait_for app_registered
APP=$(app_field app_id)

# --- 1. idle from the start
check_eq "the application is elastic" true "$(app_field dynamic_allocation)"
check_eq "it wants no executor" 0 "$(app_field executors_wanted)"
check_eq "it has none" 0 "$(app_field executors_live)"
check_match "sparkctl status shows 0/0 executors" "${APP} .* 0/0 elastic" "$("$SPARKCTL" status 2>&1)"

# --- 2. a backlog grows it
"$SPARKCTL" submit --name grow --json --command 'sleep 0.4; echo {#}' --count 12 >"$T/grow.out" 2>"$T/grow.err" &
submit=$!
check "the first task brings an executor" wait_until 30 live_at_least 1
check "the backlog grows the app beyond 1 executor" wait_until 30 live_at_least 2
rc=0
wait "$submit" || rc=$?
check_eq "the job succeeds" 0 "$rc"
check_eq "each task once, with its own output" \
        "$(seq 0 11 | awk '{ printf "%s %s\n", $1, $1 }')" \
        "$(jq -r '"\(.task) \(.output | rtrimstr("\n"))"' "$T/grow.out")"
check_eq "no task failed or ran twice" "" "$(jq -c 'select(.status != "ok" or .attempts != 1)' "$T/grow.out")"
check "the driver logged the totals it wanted" [ "$(logged EXECUTORS_WANTED driver app="$APP")" -ge 2 ]
before=$(registered_executors)

# --- 3. idle again: down to zero
check "idle executors are released" wait_until 30 live_is 0
check_eq "the app wants none" 0 "$(app_field executors_wanted)"
check "no executor unit is left" wait_until 30 no_units
check "the driver logged each release" released_logged "$before"
check "the master logged the releases" [ "$(logged EXECUTORS_RELEASED master app="$APP")" -ge 1 ]
check_eq "no released executor held a task" 0 \
        "$(grep -c 'lost: .*; [1-9][0-9]* running tasks re-queued' "$(daemon_log driver)" || true)"

# --- 4. a new job brings it back
"$SPARKCTL" submit --name back --json --command 'echo {#}' --count 20 >"$T/back.out" 2>"$T/back.err"
rc=$?
check_eq "the second job succeeds" 0 "$rc"
check_eq "each task once" "$(seq 0 19 | awk '{ printf "%s %s\n", $1, $1 }')" \
        "$(jq -r '"\(.task) \(.output | rtrimstr("\n"))"' "$T/back.out")"
check "a new executor registered for it" [ "$(registered_executors)" -gt "$before" ]

# --- 5. bad releases change nothing (once the app is idle again, so that
# nothing else changes its total meanwhile)
check "the app is back at 0 executors" wait_until 30 live_is 0
wanted=$(app_field executors_wanted)
out=$("$HC" "$SPARK_MASTER_URL" send release_executors "app_id=$APP" executor_ids.0=999999 2>&1 || true)
check_match "releasing an executor the app never had is refused" \
        "^error -2 executor 999999 is not one of application $APP's; nothing released" "$out"
out=$("$HC" "$SPARK_MASTER_URL" send release_executors app_id=app-20991231235959-0001 executor_ids.0=1 2>&1 || true)
check_match "releasing for an unknown app is refused" '^error -2 unknown application' "$out"
out=$("$HC" "$SPARK_MASTER_URL" send release_executors "app_id=$APP" 2>&1 || true)
check_match "a release of no executor is refused" '^error -22 0 executor ids to release' "$out"
out=$("$HC" "$SPARK_MASTER_URL" send release_executors "app_id=../etc" executor_ids.0=1 2>&1 || true)
check_match "a hostile app id is refused" '^error -22 invalid application id' "$out"
check_eq "the wanted total is unchanged" "$wanted" "$(app_field executors_wanted)"
check_eq "... and no executor came" 0 "$(app_field executors_live)"
head -c 32 /dev/urandom >"$T/key32"
out=$("$HC" "$SPARK_MASTER_URL" send register_application name=evil "driver_url=ipc://$T/evil.sock" \
        cores_per_executor=1 executor_memory_mb=64 executor_key=@"$T/key32" dynamic_allocation=true \
        initial_executors=-1 2>&1 || true)
check_match "an elastic registration asking for -1 executors is refused" \
        '^error -22 initial_executors -1 out of range' "$out"
check_eq "... and registers nothing" 1 "$("$SPARKCTL" status --json 2>/dev/null | jq '.apps | length')"
