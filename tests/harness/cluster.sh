# shellcheck shell=bash
# shellcheck disable=SC2016  # jq filters: their $a is jq's, not the shell's
# A spark-master and spark-workers on the harness's user manager, for
# black-box tests (source after lib.sh):
#
#   . "$(dirname "$0")/../harness/cluster.sh"
#   cluster_init                       # checks the programs, sets $T, $M, ...
#   master_conf master 'spread_out = true; max_executor_retries = 3;'
#   start_master master
#   worker_conf w1 tcp 4 1024          # NAME, tcp|ipc, cores, memory_mb
#   start_worker w1
#   app=$(register_app --max-cores 4 --env SPARK_FAKE_MODE=sleep)
#   check "4 running" wait_for app_executors_are "$app" running 4
#
# Executors are tests/helpers/fake-executor units (SPARK_FAKE_MODE from the
# app's executor_env says what they do); the "driver" is
# tests/helpers/fake-driver, which registers apps and prints event streams.
# Every spark-executor-* unit is stopped at exit: executors outlive workers.

declare -A WORKER_LISTEN=() WORKER_EVENTS=() WORKER_DIR=() WORKER_ID=()

# shellcheck disable=SC2034  # used by the tests
cluster_init() {
        T=$(harness_tmpdir)
        SPARKCTL=$SPARK_BUILD/sparkctl
        FAKE_DRIVER=$SPARK_BUILD/tests/helpers/fake-driver
        FAKE_EXECUTOR=$SPARK_BUILD/tests/helpers/fake-executor
        require_programs spark-master spark-worker sparkctl tests/helpers/fake-driver tests/helpers/fake-executor
        command -v jq >/dev/null || skip_all "jq is not installed"
        require_user_manager
        stop_user_units_on_exit 'spark-executor-*'
        local port
        port=$(free_port) || die "no free port"
        M=tcp://127.0.0.1:$port
        port=$(free_port) || die "no free port"
        ME=tcp://127.0.0.1:$port
}

# master_conf NAME [MASTER-KEYS]: writes $T/NAME.conf for a master on $M/$ME
# (worker_timeout_ms = 1500 unless MASTER-KEYS set it).
master_conf() {
        local keys=${2:-}
        [[ $keys == *worker_timeout_ms* ]] || keys="worker_timeout_ms = 1500; $keys"
        cat >"$T/$1.conf" <<CONF
cluster: { master = "$M"; master_events = "$ME"; };
master: { listen = "$M"; events_listen = "$ME"; state_dir = "$T/$1-state"; $keys };
CONF
}

start_master() {
        start_daemon "$1" "$SPARK_BUILD/spark-master" --config "$T/$1.conf"
        wait_for quietly "$SPARKCTL" --master "$M" status || die "the master $1 does not answer"
}

# worker_conf NAME tcp|ipc CORES MEMORY_MB [WORKER-KEYS]
worker_conf() {
        local name=$1 kind=$2 cores=$3 mem=$4 extra=${5:-} port
        if [ "$kind" = tcp ]; then
                port=$(free_port) || die "no free port"
                WORKER_LISTEN[$name]=tcp://127.0.0.1:$port
                port=$(free_port) || die "no free port"
                WORKER_EVENTS[$name]=tcp://127.0.0.1:$port
        else
                WORKER_LISTEN[$name]=ipc://$T/$name.sock
                WORKER_EVENTS[$name]=ipc://$T/$name-events.sock
        fi
        WORKER_DIR[$name]=$T/$name-work
        cat >"$T/$name.conf" <<CONF
cluster: { master = "$M"; master_events = "$ME"; };
worker: { listen = "${WORKER_LISTEN[$name]}"; events_listen = "${WORKER_EVENTS[$name]}";
          advertise_host = "localhost"; cores = $cores; memory_mb = $mem; heartbeat_ms = 200;
          systemd_bus = "user"; executor_binary = "$FAKE_EXECUTOR";
          work_dir = "${WORKER_DIR[$name]}"; $extra };
CONF
}

# start_worker NAME [DAEMON-NAME]: starts it and waits until the master lists
# it ALIVE; sets WORKER_ID[NAME].
start_worker() {
        local name=$1 daemon=${2:-$1} f
        start_daemon "$daemon" "$SPARK_BUILD/spark-worker" --config "$T/$name.conf"
        wait_for quietly worker_id_file "$name" || die "worker $name wrote no id file"
        f=$(worker_id_file "$name")
        WORKER_ID[$name]=$(cat "$f")
        wait_for worker_is "${WORKER_ID[$name]}" alive || die "worker $name did not register"
}

# start_two_workers: w1 on tcp and w2 on ipc, 4 cores and 2048 MB each,
# started and registered.
start_two_workers() {
        worker_conf w1 tcp 4 2048
        worker_conf w2 ipc 4 2048
        start_worker w1
        start_worker w2
}

# worker_id_file NAME: the file in which the worker keeps its id.
worker_id_file() {
        local f
        for f in "${WORKER_DIR[$1]}"/worker-*.id; do
                [ -s "$f" ] && { echo "$f"; return 0; }
        done
        return 1
}

# --- the master's view (sparkctl status --json) ----------------------------------

status_json() {
        "$SPARKCTL" --master "$M" status --json 2>/dev/null
}

# q JQ-FILTER [JQ-ARGS...]: the filter applied to the status JSON.
q() {
        local filter=$1
        shift
        status_json | jq -r "$@" "$filter"
}

worker_is() {
        [ "$(q '.workers[] | select(.worker_id == $w) | .state' --arg w "$1")" = "$2" ]
}

worker_absent() {
        [ -z "$(q '.workers[] | select(.worker_id == $w) | .worker_id' --arg w "$1")" ]
}

# app_executors APP [STATE]: "EXEC WORKER STATE" lines, sorted by executor id.
app_executors() {
        q '.executors[] | select(.app_id == $a and ($s == "" or .state == $s))
           | "\(.executor_id) \(.worker_id) \(.state)"' --arg a "$1" --arg s "${2:-}" | sort -n
}

# app_executors_are APP STATE N: exactly N executors of APP, all in STATE.
app_executors_are() {
        local all
        all=$(app_executors "$1")
        [ "$(grep -c . <<<"$all")" -eq "$3" ] && [ "$(grep -c " $2\$" <<<"$all")" -eq "$3" ]
}

app_state() {
        q '.apps[] | select(.app_id == $a) | .state' --arg a "$1"
}

app_absent() {
        [ -z "$(app_state "$1")" ]
}

# --- the driver's side ---------------------------------------------------------------

# register_app [fake-driver register options]: prints the app id.
register_app() {
        "$FAKE_DRIVER" --master "$M" register "$@"
}

unregister_app() {
        "$FAKE_DRIVER" --master "$M" unregister "$@"
}

# subscribe NAME URL: a subscriber printing every event of URL into
# $(daemon_log NAME); returns once it is connected.
subscribe() {
        start_daemon "$1" "$FAKE_DRIVER" subscribe "$2" --timeout 300
        wait_for grep -qs '^connected$' "$(daemon_log "$1")" || die "$1 could not subscribe to $2"
}

# event_seen NAME EXTENDED-REGEX: has subscriber NAME printed a matching line?
event_seen() {
        grep -Eq -- "$2" "$(daemon_log "$1")"
}

events_of() {
        grep -E -- "$2" "$(daemon_log "$1")"
}

# --- units ---------------------------------------------------------------------------

# app_units APP: the loaded spark-executor units of APP, one a line.
app_units() {
        user_units "spark-executor-$1-*"
}

app_units_count() {
        local u
        u=$(app_units "$1")
        grep -c . <<<"$u"
}

app_units_are() {
        [ "$(app_units_count "$1")" -eq "$2" ]
}

unit_of() {
        echo "spark-executor-$1-$2.service"
}

unit_prop() {
        systemctl --user show -p "$2" --value "$1" 2>/dev/null
}

# unit_gone UNIT: the user manager does not know UNIT (any more).
unit_gone() {
        [ -z "$(user_units "$1")" ]
}

# app_executor_ids APP [STATE]: "1 2 3" (sorted).
app_executor_ids() {
        app_executors "$@" | awk '{ print $1 }' | tr '\n' ' ' | sed 's/ $//'
}

app_executor_ids_are() {
        [ "$(app_executor_ids "$1" "$2")" = "$3" ]
}

# events_count NAME EXTENDED-REGEX: how many lines of subscriber NAME match.
events_count() {
        grep -Ec -- "$2" "$(daemon_log "$1")"
}

events_count_is() {
        [ "$(events_count "$1" "$2")" -eq "$3" ]
}

# stop_cleanly NAME...: each daemon exits 0 on SIGTERM (under the sanitizer
# build, a leak or an error at shutdown makes it exit non-zero)
stop_cleanly() {
        local name rc ok=0
        for name in "$@"; do
                rc=0
                stop_daemon "$name" || rc=$?
                if [ $rc -ne 0 ]; then
                        echo "#   $name exited with status $rc"
                        grep -E 'Sanitizer|runtime error' "$(daemon_log "$name")" | head -n 5 | sed 's/^/#   /'
                        ok=1
                fi
        done
        return $ok
}

# ha_masters_init: two masters in recovery mode zookeeper on the suite's
# ensemble (after require_zookeeper): m1 on the cluster's $M/$ME (also
# $M1/$ME1), m2 on new ports ($M2/$ME2); $MASTERS and $EVENTS list both, as
# cluster.master and master_events do; $T/m1.conf and $T/m2.conf are theirs.
# shellcheck disable=SC2034  # used by the tests
ha_masters_init() {
        local port
        M1=$M ME1=$ME
        port=$(free_port) || die "no free port"
        M2=tcp://127.0.0.1:$port
        port=$(free_port) || die "no free port"
        ME2=tcp://127.0.0.1:$port
        MASTERS="$M1,$M2" EVENTS="$ME1,$ME2"
        ha_master_conf m1 "$M1" "$ME1"
        ha_master_conf m2 "$M2" "$ME2"
}

# ha_master_conf NAME LISTEN EVENTS
ha_master_conf() {
        cat >"$T/$1.conf" <<CONF
cluster: { master = "$MASTERS"; master_events = "$EVENTS"; };
master: { listen = "$2"; events_listen = "$3"; state_dir = "$T/$1-state"; worker_timeout_ms = 3000;
          recovery_mode = "zookeeper"; zookeeper = "$ZK_CONNECT"; zookeeper_dir = "$ZK_TEST_DIR";
          zookeeper_session_timeout_ms = 2000; };
CONF
}

# ha_start_masters: starts m1, which is elected leader, then m2, a standby
# naming m1 (after ha_masters_init).
ha_start_masters() {
        start_daemon m1 "$SPARK_BUILD/spark-master" --config "$T/m1.conf"
        check "m1 is elected leader" wait_for ha_leads "$M1"
        start_daemon m2 "$SPARK_BUILD/spark-master" --config "$T/m2.conf"
        check "m2 answers as a standby naming m1" wait_for ha_standby_for "$M2" "$M1"
}

# require_zk_cli: zk_cli can run (java is installed), else skip.
require_zk_cli() {
        command -v java >/dev/null || skip_all "no java: zkCli cannot set an ACL"
}

# zk_cli ARGS...: Debian's ZooKeeper command line client, one command
# (after require_zk_cli).
zk_cli() {
        timeout 60 java -Xmx64m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "/etc/zookeeper/conf:/usr/share/java/*" \
                org.apache.zookeeper.ZooKeeperMain -server "$ZK_CONNECT" "$@" 2>&1
}

# ha_leads URL: the master there answers as the leader.
ha_leads() { "$SPARKCTL" --master "$1" status >/dev/null 2>&1; }
# ha_standby_for URL LEADER: the master at URL answers "standby, leader is LEADER".
ha_standby_for() { "$SPARKCTL" --master "$1" status 2>&1 | grep -qx "sparkctl: standby, leader is $2"; }
