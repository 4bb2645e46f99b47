#!/usr/bin/env bash
# spark-master and two spark-workers (one on tcp://, one on ipc://) against the
# harness's systemd user manager, with fake-executor units: spread-out
# placement, each unit's properties (docs/DESIGN.md §5), every way an executor ends
# (exit 0, exit 3, SIGKILL, over MemoryMax) reported with its reason on the
# master's and the workers' event streams, a crash loop failing its app after
# max_executor_retries, hostile registrations and launches refused without a
# trace, and an unregistered app leaving no unit behind.
# shellcheck disable=SC2016  # jq filters and literal "$" in hostile input
# shellcheck source=tests/harness/lib.sh
. "$(dirname "$0")/../harness/lib.sh"
# shellcheck source=tests/harness/cluster.sh
. "$(dirname "$0")/../harness/cluster.sh"

cluster_init
DRIVER=tcp://127.0.0.1:9   # nobody listens: fake executors never call back

master_conf master 'spread_out = true; max_executor_retries = 3;'
start_master master
subscribe sub-m "$ME"
start_two_workers
subscribe sub-w1 "${WORKER_EVENTS[w1]}"
subscribe sub-w2 "${WORKER_EVENTS[w2]}"
check "two workers are alive" [ "$(q '[.workers[] | select(.state == "alive")] | length')" = 2 ]
check "the workers have distinct ids" [ "${WORKER_ID[w1]}" != "${WORKER_ID[w2]}" ]

declare -A DIR_OF=([${WORKER_ID[w1]}]=${WORKER_DIR[w1]} [${WORKER_ID[w2]}]=${WORKER_DIR[w2]})

# worker_events REGEX: a line of either worker's event stream matches
worker_events() {
        event_seen sub-w1 "$1" || event_seen sub-w2 "$1"
}

# env_entries UNIT: its Environment=, one entry a line
env_entries() {
        unit_prop "$1" Environment | python3 -c 'import shlex, sys; print("\n".join(shlex.split(sys.stdin.read())))'
}

# ============================================================ spread-out placement
app=$(register_app --name spread --max-cores 4 --memory 48 \
        --env SPARK_FAKE_MODE=sleep --env 'SPARK_TEST_WORDS=two words')
check_match "the app gets an id in Spark's form" '^app-[0-9]{14}-[0-9]{4}$' "$app"
check "its 4 executors run" wait_for app_executors_are "$app" running 4
execs=$(app_executors "$app")
check_eq "spread_out: 2 executors on each worker" "2 2" \
        "$(grep -c " ${WORKER_ID[w1]} " <<<"$execs") $(grep -c " ${WORKER_ID[w2]} " <<<"$execs")"
check_eq "the executor ids are 1..4" "1 2 3 4" "$(app_executor_ids "$app")"
check_eq "each worker counts 2 cores and 96 MiB used" "2 96 2 96" \
        "$(q '[.workers[] | "\(.cores_used) \(.memory_used_mb)"] | join(" ")')"
check_eq "the app is running with 4 cores" "running 4" \
        "$(q '.apps[] | select(.app_id == $a) | "\(.state) \(.cores_granted)"' --arg a "$app")"
check_eq "4 units, one per executor" "$(for i in 1 2 3 4; do unit_of "$app" "$i"; done)" "$(app_units "$app" | sort -V)"

while read -r -u 3 id wid _; do
        unit=$(unit_of "$app" "$id")
        wdir=${DIR_OF[$wid]}/$app/$id
        check_eq "executor $id: the master names its unit" "$unit" \
                "$(q '.executors[] | select(.app_id == $a and .executor_id == ($i | tonumber)) | .unit' \
                        --arg a "$app" --arg i "$id")"
        check_eq "executor $id: unit properties (docs/DESIGN.md §5)" "$(sort <<EOF
ActiveState=active
CPUQuotaPerSecUSec=1s
CollectMode=inactive-or-failed
KillMode=control-group
MemoryMax=$((48 << 20))
Slice=spark-executors.slice
SyslogIdentifier=spark-executor
WorkingDirectory=$wdir
EOF
)" "$(systemctl --user show "$unit" \
                -p ActiveState,CPUQuotaPerSecUSec,CollectMode,KillMode,MemoryMax,Slice,SyslogIdentifier,WorkingDirectory |
                sort)"
        check_match "executor $id: its Description names it" "executor $id .*$app" "$(unit_prop "$unit" Description)"
        env=$(env_entries "$unit")
        for e in "SPARK_APP_ID=$app" "SPARK_EXECUTOR_ID=$id" "SPARK_WORKER_ID=$wid" "SPARK_DRIVER_URL=$DRIVER" \
                "SPARK_FAKE_MODE=sleep" "SPARK_TEST_WORDS=two words"; do
                check "executor $id: Environment has $e" grep -qxF -- "$e" <<<"$env"
        done
        check_match "executor $id: ExecStart runs the executor binary for it" \
                "argv\[\]=$FAKE_EXECUTOR --driver $DRIVER --app-id $app --executor-id $id --cores 1 " \
                "$(unit_prop "$unit" ExecStart)"
        check "executor $id: its working directory exists" [ -d "$wdir" ]
        check "executor $id: the worker's event stream says it runs, with its pid" \
                wait_for worker_events "executor_state_changed app=$app exec=$id worker=$wid state=running .* pid=[1-9]"
done 3<<<"$execs"

unit=$(unit_of "$app" 1)
check "the executor process got the app's environment (journal)" \
        wait_for journal_grep "$unit" '^fake-executor: env SPARK_TEST_WORDS=two words$'
check "the executor process runs in its working directory (journal)" \
        wait_for journal_grep "$unit" "^fake-executor: cwd=/.*/$app/1\$"
check "the executor process got its 32-byte secret as a credential (journal)" \
        wait_for journal_grep "$unit" '^fake-executor: credential spark-executor-secret 32$'
check_fails "... and no CA on a cluster without TLS" journal_grep "$unit" '^fake-executor: credential spark-ca '
check_fails "... and no SPARK_TLS_* variable" journal_grep "$unit" '^fake-executor: env SPARK_TLS_'
check_eq "the master announced the 4 executors" 4 \
        "$(events_count sub-m "executor_added app=$app exec=[1-4] worker=worker-")"
check "the master's event stream says they run" \
        wait_for events_count_is sub-m "executor_updated app=$app exec=[1-4] .*state=running" 4

# ============================================================ bad input changes nothing
snapshot() {
        q 'del(.workers[].last_heartbeat_ms_ago)' -c
        user_units 'spark-executor-*'
        wc -l <"$(daemon_log sub-m)"
}
before=$(snapshot)

# answers_error REGEX CMD...: CMD (a fake-driver call) got an Error whose
# message matches REGEX (exit 1: answered, not unreachable)
answers_error() {
        local regex=$1 out rc=0
        shift
        out=$("$@" 2>&1) || rc=$?
        if [ $rc -eq 1 ] && grep -Eq -- "^fake-driver: error -[0-9]+: .*$regex" <<<"$out"; then
                return 0
        fi
        echo "#   $*: exit $rc: $out"
        return 1
}

# refused REGISTER-OPTIONS...: registration answered with -EINVAL
refused() {
        answers_error "" register_app "$@"
}
check "cores_per_executor = -1 is refused" refused --cores-per-executor -1
check "cores_per_executor = 0 is refused" refused --cores-per-executor 0
check "max_cores = -1 is refused" refused --max-cores -1
check "memory = 0 is refused" refused --memory 0
check "memory = -5 is refused" refused --memory -5
check "memory = 10^11 MiB is refused" refused --memory 100000000000
check "an env name with a space is refused" refused --env-pair 'BAD NAME' x
check "an env name with a shell metacharacter is refused" refused --env-pair 'X;rm -rf /' x
check "an env name with '=' is refused" refused --env-pair 'A=B' x
check "an empty env name is refused" refused --env-pair '' x
check "an env name the worker sets (SPARK_APP_ID) is refused" refused --env-pair SPARK_APP_ID app-20261129000000-0001
check "an env name the worker sets (SPARK_EXECUTOR_MEMORY_MB) is refused" refused --env-pair SPARK_EXECUTOR_MEMORY_MB 1
check "an env value with a newline (unit-file injection) is refused" refused --env-pair X $'a\nExecStart=/bin/evil'
check "an env value with a control character is refused" refused --env-pair X $'a\001b'
check "an env value that is not UTF-8 is refused" refused --env-pair X $'\xff\xfe'
check "a driver URL with a space is refused" refused --driver-url "$DRIVER --evil"
check "a driver URL with '\$' (ExecStart expansion) is refused" refused --driver-url 'ipc:///tmp/x$HOME'
check "a driver URL with a quote is refused" refused --driver-url "tcp://a'b:1"
check "a driver URL of another scheme is refused" refused --driver-url 'http://x/'
check "an app name with '/' is refused" refused --name '../../etc'
check "an app id with '/' is refused" refused --app-id 'app-x/../y'
check "an app id with a unit suffix is refused" refused --app-id 'app-20261129000000-0001.service'
check "unregistering a malformed app id is refused" answers_error 'invalid application id' \
        unregister_app 'app-1; rm -rf /'
check "RequestExecutors with total = -1 is refused" answers_error 'executor count' \
        "$FAKE_DRIVER" --master "$M" request-executors "$app" -1
check "RequestExecutors for an unknown app is refused" answers_error 'unknown application' \
        "$FAKE_DRIVER" --master "$M" request-executors app-20991231000000-0001 1

# launches sent to a worker by hand
launch() {
        "$FAKE_DRIVER" --master "${WORKER_LISTEN[w1]}" launch --app-id app-20261129000000-0077 \
                --worker-id "${WORKER_ID[w1]}" --executor-id 9 "$@"
}
check "a worker refuses a launch for another worker id" answers_error "not ${WORKER_ID[w2]}" \
        launch --worker-id "${WORKER_ID[w2]}"
check "a worker refuses executor id -1" answers_error 'invalid' launch --executor-id -1
check "a worker refuses cores = 0" answers_error 'invalid cores' launch --cores 0
check "a worker refuses more memory than it has" answers_error 'invalid cores .* memory' launch --memory 4096
check "a worker refuses a malformed app id" answers_error 'invalid application' launch --app-id 'app-x/../../y'
check "a worker refuses a driver URL with '\$', and says why" answers_error 'invalid driver URL' \
        launch --driver-url 'ipc:///tmp/x$HOME'
check "a worker refuses an env name it sets, and says why" answers_error 'may not set SPARK_WORKER_ID' \
        launch --env-pair SPARK_WORKER_ID evil

check_eq "the master and the units are as before" "$before" "$(snapshot)"
check_eq "the workers started no unit of the hand-made launches" "" "$(app_units app-20261129000000-0077)"

# ============================================================ each way an executor ends
# A unit killed from outside: reported FAILED "signal KILL" and replaced.
victim=$(unit_of "$app" 1)
systemctl --user kill -s KILL "$victim"
check "SIGKILL: the worker's event stream says 'signal KILL'" wait_for worker_events \
        "executor_state_changed app=$app exec=1 worker=(${WORKER_ID[w1]}|${WORKER_ID[w2]}) state=failed exit_code=137 .*reason=signal KILL\$"
check "SIGKILL: the master's event stream says 'signal KILL'" wait_for event_seen sub-m \
        "executor_updated app=$app exec=1 .*state=failed exit_code=137 .*reason=signal KILL\$"
check "SIGKILL: the executor is replaced (4 running, ids 2..5)" wait_for app_executor_ids_are "$app" running "2 3 4 5"
check "SIGKILL: its unit is gone" wait_for unit_gone "$victim"

# One app per outcome, one core each, running side by side.
app_exit0=$(register_app --name exit0 --max-cores 1 --memory 32 --env SPARK_FAKE_MODE=sleep:0.3)
app_exit3=$(register_app --name exit3 --max-cores 1 --memory 32 --env SPARK_FAKE_MODE=exit:3)
app_kill=$(register_app --name kill --max-cores 1 --memory 32 --env SPARK_FAKE_MODE=kill-self:KILL)
app_oom=$(register_app --name oom --max-cores 1 --memory 32 --env SPARK_FAKE_MODE=alloc:256)

check "exit 0: the worker's event stream says 'exit-code 0'" wait_for worker_events \
        "executor_state_changed app=$app_exit0 exec=1 .*state=exited exit_code=0 .*reason=exit-code 0\$"
check "exit 0: the master's event stream says 'exit-code 0'" wait_for event_seen sub-m \
        "executor_updated app=$app_exit0 exec=1 .*state=exited exit_code=0 .*reason=exit-code 0\$"
check "exit 0: a normal exit does not fail the app" [ "$(app_state "$app_exit0")" = running ]

check "exit 3: the worker's event stream says 'exit-code 3'" wait_for worker_events \
        "executor_state_changed app=$app_exit3 exec=1 .*state=failed exit_code=3 .*reason=exit-code 3\$"
check "exit 3: the master's event stream says 'exit-code 3'" wait_for event_seen sub-m \
        "executor_updated app=$app_exit3 exec=1 .*state=failed exit_code=3 .*reason=exit-code 3\$"

check "kill-self: the worker's event stream says 'signal KILL'" wait_for worker_events \
        "executor_state_changed app=$app_kill exec=1 .*state=failed exit_code=137 .*reason=signal KILL\$"
check "kill-self: the master's event stream says 'signal KILL'" wait_for event_seen sub-m \
        "executor_updated app=$app_kill exec=1 .*state=failed exit_code=137 .*reason=signal KILL\$"

# Hybrid cgroups: systemd 252 reports a MemoryMax kill as SIGKILL (docs/DESIGN.md §12).
oom_reason='(oom-kill|signal KILL( \(memory limit\))?)'
check "MemoryMax: the worker's event stream says the memory limit killed it" wait_for worker_events \
        "executor_state_changed app=$app_oom exec=1 .*state=failed .*reason=$oom_reason\$"
check "MemoryMax: the master's event stream says so too" wait_for event_seen sub-m \
        "executor_updated app=$app_oom exec=1 .*state=failed .*reason=$oom_reason\$"
check_fails "MemoryMax: it could not allocate more than its limit" \
        journal_grep "$(unit_of "$app_oom" 1)" 'allocated 256 MiB and lives'

# Crash loops: max_executor_retries = 3 failures in a row fail the app.
for a in exit3:"$app_exit3":'exit-code 3' kill:"$app_kill":'signal KILL' oom:"$app_oom":"$oom_reason"; do
        IFS=: read -r what id reason <<<"$a"
        check "$what: the crash loop fails the app, with the reason" wait_for event_seen sub-m \
                "application_removed app=$id state=failed reason=3 executors failed in a row, last: $reason\$"
        check_eq "$what: exactly 3 executors were launched" 3 "$(events_count sub-m "executor_added app=$id ")"
        check "$what: the master forgot the app" app_absent "$id"
        check "$what: none of its units remain" wait_for app_units_are "$id" 0
done
check "the first app kept its 4 executors meanwhile" app_executors_are "$app" running 4

# ============================================================ unregistering
check "exit 0: unregistering succeeds" unregister_app "$app_exit0"
check "unregistering the first app succeeds" unregister_app "$app" "test done"
check "the master says the app finished, with the reason" wait_for event_seen sub-m \
        "application_removed app=$app state=finished reason=test done\$"
for id in 2 3 4 5; do
        check "executor $id: the worker reports it stopped on request" wait_for worker_events \
                "executor_state_changed app=$app exec=$id .*state=killed .*reason=stopped on request: application removed\$"
done
check "none of its units remain" wait_for app_units_are "$app" 0
check "no executor unit remains at all" wait_for unit_gone 'spark-executor-*'
check_eq "the master holds no app and no executor" "0 0" "$(q '"\(.apps | length) \(.executors | length)"')"
check_eq "the workers' cores and memory are free again" "0 0 0 0" \
        "$(q '[.workers[] | "\(.cores_used) \(.memory_used_mb)"] | join(" ")')"
check "unregistering again is harmless (idempotent)" unregister_app "$app"
check "the daemons are still running" eval 'daemon_alive master && daemon_alive w1 && daemon_alive w2'
check "the workers and the master exit cleanly on SIGTERM" stop_cleanly w1 w2 master
