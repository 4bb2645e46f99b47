#!/usr/bin/env bash
# Launches under way when the master dies are sent again by the next master
# (docs/DESIGN.md §9: a master restart loses nothing).  The worker is frozen (SIGSTOP)
# when the app registers, so the master's LaunchExecutor calls wait on a
# connection it never completes and its executors stay LAUNCHING; the
# master is SIGKILLed and starts again from its state_dir.  Only the new
# master's resend can start them: once the worker is thawed, executors 1-3
# run under those ids, one unit each, and none was given up and replaced.
# shellcheck source=tests/harness/lib.sh
. "$(dirname "$0")/../harness/lib.sh"
# shellcheck source=tests/harness/cluster.sh
. "$(dirname "$0")/../harness/cluster.sh"

cluster_init
# (tcp: nng 1.5's ipc listener stops serving once a dialer gave up on it
# while it was frozen; tcp ones do not)
# the frozen worker sends no heartbeats for a while: not lost meanwhile
master_conf master "worker_timeout_ms = 60000;"
# (debug: the line that says the state was saved)
start_daemon master env SPARK_LOG_LEVEL=debug "$SPARK_BUILD/spark-master" --config "$T/master.conf"
wait_for quietly "$SPARKCTL" --master "$M" status || die "the master does not answer"
worker_conf w1 tcp 3 1024
start_worker w1
W1=${WORKER_ID[w1]}
kill -STOP "$(daemon_pid w1)"

app=$(register_app --name resume --max-cores 3 --memory 32 --env SPARK_FAKE_MODE=sleep)
check "3 executors are placed on the frozen worker" wait_for app_executors_are "$app" launching 3
check_eq "... all on it" 3 "$(app_executors "$app" launching | grep -c " $W1 ")"
check "... and the master has saved them" \
        wait_for grep -q "Saved the state: 1 apps, 1 workers, 3 executors" "$(daemon_log master)"

stop_daemon master KILL
start_daemon master-again "$SPARK_BUILD/spark-master" --config "$T/master.conf"
check "the new master knows the 3 launching executors" wait_for app_executors_are "$app" launching 3
check "... and sends their launches again" wait_for grep -q "Sending 3 launches again" "$(daemon_log master-again)"

kill -CONT "$(daemon_pid w1)"
check "once the worker is thawed, executors 1-3 run under the ids the first master gave them" \
        wait_until 30 app_executor_ids_are "$app" running "1 2 3"
check "one unit each" app_units_are "$app" 3
check_eq "none was replaced" "1 2 3" "$(app_executor_ids "$app")"
check "the worker started each once" \
        [ "$(logged EXECUTOR_LAUNCHED w1 app="$app")" -eq 3 ]

unregister_app "$app" >/dev/null
check "the app's units are gone once it is unregistered" wait_until 30 app_units_are "$app" 0
check "the daemons stop cleanly" stop_cleanly w1 master-again
