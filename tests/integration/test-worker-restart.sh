#!/usr/bin/env bash
# Executors outlive their worker (docs/DESIGN.md §5, §9) against the harness's systemd
# user manager: a worker restarted after SIGTERM or SIGKILL adopts its running
# units (same names, none duplicated, the master keeps the same executor ids
# and launches none); an executor that ended while its worker was down is
# LOST and replaced; a worker silent for worker_timeout_ms is LOST, its
# executors LOST and replaced on the other worker, and when it comes back the
# units of those executors are stopped.
# shellcheck disable=SC2016  # jq filters and literal "$" in hostile input
# shellcheck source=tests/harness/lib.sh
. "$(dirname "$0")/../harness/lib.sh"
# shellcheck source=tests/harness/cluster.sh
. "$(dirname "$0")/../harness/cluster.sh"

TIMEOUT_MS=2500
cluster_init
master_conf master "spread_out = true; worker_timeout_ms = $TIMEOUT_MS; max_executor_retries = 3;"
start_master master
subscribe sub-m "$ME"
start_two_workers
W1=${WORKER_ID[w1]} W2=${WORKER_ID[w2]}

app=$(register_app --name restart --max-cores 4 --memory 32 --env SPARK_FAKE_MODE=sleep)
check "4 executors run" wait_for app_executors_are "$app" running 4
placed=$(app_executors "$app")
check_eq "2 on each worker" "2 2" "$(grep -c " $W1 " <<<"$placed") $(grep -c " $W2 " <<<"$placed")"
units=$(app_units "$app" | sort)

# main_pids: "UNIT PID" of the app's units
main_pids() {
        local u
        for u in $(app_units "$app" | sort); do
                echo "$u $(unit_prop "$u" MainPID)"
        done
}
pids=$(main_pids)

# worker_view NAME: "EXEC STATE ..." of the executors the worker itself holds
# (its request endpoint answers a ClusterStateRequest too)
worker_view() {
        "$SPARKCTL" --master "${WORKER_LISTEN[$1]}" status --json 2>/dev/null |
                jq -r '.executors[] | "\(.executor_id) \(.state)"' | sort -n | tr '\n' ' ' | sed 's/ $//'
}

worker_view_is() {
        [ "$(worker_view "$1")" = "$2" ]
}

# ids_on WORKER-ID: "1 2", the app's running executors the master places there
ids_on() {
        app_executors "$app" running | awk -v w="$1" '$2 == w { print $1 }' | tr '\n' ' ' | sed 's/ $//'
}

ids_on_are() {
        [ "$(ids_on "$1")" = "$2" ]
}

launched() {
        events_count sub-m "executor_added app=$app "
}

launched_more_than() {
        [ "$(launched)" -gt "$1" ]
}

# units_active APP "ID...": the units of those executors are all active
units_active() {
        local i
        for i in $2; do
                [ "$(systemctl --user is-active "$(unit_of "$1" "$i")")" = active ] || return 1
        done
}

worker_summary_is() {
        [ "$(q '.workers[] | select(.worker_id == $w) | "\(.state) \(.cores_used)/\(.cores)"' --arg w "$1")" = "$2" ]
}

# ============================================================ restart: adoption
current=w1
for sig in TERM KILL; do
        ids1=$(ids_on "$W1")
        rc=0
        stop_daemon "$current" "$sig" 2>/dev/null || rc=$?
        check_eq "SIG$sig: the worker's exit status" "$([ "$sig" = TERM ] && echo 0 || echo 137)" "$rc"
        check "SIG$sig: the worker's units keep running without it" units_active "$app" "$ids1"
        n=$(launched)
        start_worker w1 "w1-$sig"
        current=w1-$sig
        check "SIG$sig: the restarted worker adopts its 2 executors" \
                wait_for worker_view_is w1 "$(for i in $ids1; do printf '%s running ' "$i"; done | sed 's/ $//')"
        check "SIG$sig: its log says so" grep -q "Adopted 2 running executors" "$(daemon_log "$current")"
        check "SIG$sig: the worker registered again" wait_for grep -q "Registered with master" "$(daemon_log "$current")"
        check_fails "SIG$sig: the master launches no executor (1 s)" wait_until 1 launched_more_than "$n"
        check_eq "SIG$sig: the master still places the same executors, running" "$placed" "$(app_executors "$app")"
        check_eq "SIG$sig: the same units, none duplicated" "$units" "$(app_units "$app" | sort)"
        check_eq "SIG$sig: the same processes (nothing restarted)" "$pids" "$(main_pids)"
        check "SIG$sig: the worker is counted once, alive, with its cores in use" worker_summary_is "$W1" "alive 2/4"
done

# An executor whose unit ends while its worker is down is LOST on re-registration.
gone=$(ids_on "$W2" | awk '{ print $1 }')
check "the other worker exits cleanly on SIGTERM" stop_cleanly w2
systemctl --user stop "$(unit_of "$app" "$gone")"
start_worker w2 w2-TERM
check "an executor that ended while its worker was down is LOST" wait_for event_seen sub-m \
        "executor_updated app=$app exec=$gone .*state=lost .*reason=gone after its worker restarted\$"
check "... and replaced: 4 executors run" wait_for app_executors_are "$app" running 4
check_eq "... by one new executor (5)" 5 "$(launched)"
check "... whose unit runs" wait_for units_active "$app" 5

# ============================================================ a silent worker
lost_ids=$(ids_on "$W2")
kept_ids=$(ids_on "$W1")
check_eq "before the kill: 2 executors on each worker" "2 2" "$(wc -w <<<"$lost_ids") $(wc -w <<<"$kept_ids")"
t0=$(date +%s%N)
stop_daemon w2-TERM KILL 2>/dev/null || true
check "SIGKILL: the master drops the worker" wait_until 10 worker_absent "$W2"
elapsed_ms=$((($(date +%s%N) - t0) / 1000000))
check "SIGKILL: the worker is lost within worker_timeout_ms (+1 s), after ${elapsed_ms} ms" \
        [ "$elapsed_ms" -le $((TIMEOUT_MS + 1000)) ]
line=$(events_of sub-m "worker_lost worker=$W2 ")
check_match "the master's event stream says WorkerLost, with the silence" \
        "reason=no heartbeat for [0-9]+ ms\$" "$line"
silence=$(sed -n 's/.*no heartbeat for \([0-9]*\) ms$/\1/p' <<<"$line")
check "... not before worker_timeout_ms (${silence:-?} ms of silence)" [ "${silence:-0}" -ge "$TIMEOUT_MS" ]
for id in $lost_ids; do
        check "executor $id is LOST with the worker" event_seen sub-m \
                "executor_updated app=$app exec=$id .*state=lost .*reason=worker lost: no heartbeat for [0-9]+ ms\$"
done
check "its executors are replaced on the other worker: 4 run there" wait_for eval \
        'app_executors_are "$app" running 4 && [ "$(ids_on "$W1" | wc -w)" = 4 ]'
check_eq "the kept executors are among them" "$kept_ids" \
        "$(for i in $(ids_on "$W1"); do grep -qw "$i" <<<"$kept_ids" && echo "$i"; done | tr '\n' ' ' | sed 's/ $//')"
# by design the lost worker's units run on (executors outlive workers)
check "the lost executors' units still run (their worker was lost, not their host)" \
        units_active "$app" "$lost_ids"

# The worker comes back: the master no longer wants those executors.
start_worker w2 w2-back
for id in $lost_ids; do
        check "after the lost worker is back, executor $id's unit is stopped" \
                wait_for unit_gone "$(unit_of "$app" "$id")"
done
check "the worker says the master did not know them" \
        grep -q "Stopping executor $app/[0-9]*: unknown to the master" "$(daemon_log w2-back)"
check "the returned worker is alive with no executor" wait_for worker_summary_is "$W2" "alive 0/4"
check "the app keeps exactly 4 executors" app_executors_are "$app" running 4
check "... and 4 units" app_units_are "$app" 4

check "unregistering the app succeeds" unregister_app "$app"
check "none of its units remain" wait_for app_units_are "$app" 0
check "the workers and the master exit cleanly on SIGTERM" stop_cleanly w1-KILL w2-back master
