# shellcheck shell=bash
# Helpers of the fault-injection suite (tests/faults/run.sh): a cluster of a
# master, two workers and a driver on the harness's systemd user manager,
# the job that runs under each fault, the checks after it, and teardown.
#
# Every daemon's stderr goes through fault-stamp, so each log line starts
# with its CLOCK_MONOTONIC time in µs: detection times are measured from the
# daemons' own lines against the moment the suite injected the fault.
#
# Layout of one scenario's directory ($S):
#   NAME.log            stamped log of daemon NAME (master, w1, w2, driver)
#   cluster.conf ...    configuration files
#   cmd.json fn.json    sparkctl submit --json output of the two jobs
#   stamps/             hog-N files written by the memory hog task

# --- time and logs ---------------------------------------------------------------

now_us() {
        "$STAMP" now
}

log() {
        echo "# $*"
}

# first_line_after NAME T0 REGEX: "STAMP LINE" of the first line of NAME's
# log stamped at or after T0 that matches the extended REGEX.
first_line_after() {
        local f=$S/$1.log
        [ -f "$f" ] || return 1
        awk -v t0="$2" -v re="$3" '$1 + 0 >= t0 + 0 && $0 ~ re { print; found = 1; exit } END { exit !found }' "$f"
}

# wait_line TIMEOUT_S NAME T0 REGEX: first_line_after, once it is there.
wait_line() {
        local timeout=$1
        shift
        wait_until "$timeout" first_line_after "$@" >/dev/null && first_line_after "$@"
}

# first_stamp_after NAME T0 REGEX: the stamp alone.
first_stamp_after() {
        local l
        l=$(first_line_after "$@") || return 1
        echo "${l%% *}"
}

# message LINE: a stamped log line without its stamp, program, level and
# trailing [fields].
message() {
        sed -E 's/^[0-9]+ //; s/^[a-z-]+\[[0-9]+\]: [a-z]+: //; s/ \[[^]]*\]$//' <<<"$1"
}

# count_lines NAME REGEX: lines of NAME's log matching REGEX.
count_lines() {
        local n
        n=$(grep -Ec -- "$2" "$S/$1.log" 2>/dev/null) || true
        echo "${n:-0}"
}

# ms_between T0 T1 (µs): milliseconds, one decimal.
ms_between() {
        awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", (b - a) / 1000 }'
}

# wait_until TIMEOUT_S CMD...: polls CMD every 50 ms.
wait_until() {
        local deadline
        deadline=$(($(date +%s%N) + ${1%.*} * 1000000000))
        shift
        while :; do
                "$@" && return 0
                [ "$(date +%s%N)" -lt "$deadline" ] || return 1
                sleep 0.05
        done
}

# --- failures of the current scenario ----------------------------------------------

PROBLEMS=()
declare -A W_NETNS=() W_TMPFS=()
# HA=1 (set by a scenario's setup): two masters in zookeeper recovery mode;
# with M_NETNS=1 the leader (master) runs in the network namespace, and the
# workers listen on $HOST_IP so that it reaches them
HA=0 M_NETNS=0

# problem WHAT: the scenario fails because of WHAT (said at once, and again
# in the summary).
problem() {
        PROBLEMS+=("$*")
        echo "# FAIL ($SCENARIO): $*"
}

# detected TIMEOUT_S NAME T0 REGEX: waits for the line of NAME's log that
# shows the fault was noticed (wait_line); DETECT_LINE is that line and
# DETECT_MS the time from T0 to its stamp.
# shellcheck disable=SC2034  # DETECT_MS is run.sh's
detected() {
        DETECT_LINE=$(wait_line "$@") || return 1
        DETECT_MS=$(ms_between "$3" "${DETECT_LINE%% *}")
}

# undetected WHAT PROBLEM: the fault went unnoticed: no detection time,
# WHAT for the report, and the scenario fails because of PROBLEM.
# shellcheck disable=SC2034  # DETECT_* are run.sh's
undetected() {
        DETECT_MS=-
        DETECT_WHAT=$1
        problem "$2"
}

# --- daemons -------------------------------------------------------------------------

declare -A DPID=() DWAIT=()

# daemon_start NAME [--netns NS] CMD...: CMD in the background (in network
# namespace NS), stderr and stdout stamped into $S/NAME.log (appended: a
# restarted daemon continues its log).  DPID[NAME] is its pid.  It runs
# under a subshell that waits for it, so that bash has no job killed by a
# signal to report on our terminal.
daemon_start() {
        local name=$1 ns='' i
        shift
        if [ "$1" = --netns ]; then
                ns=$2
                shift 2
        fi
        echo "$(now_us) ===== fault suite: starting $name: $*" >>"$S/$name.log"
        rm -f "$S/$name.pid"
        (
                if [ -n "$ns" ]; then
                        nsenter --net="/run/netns/$ns" -- "$@" </dev/null > >(exec "$STAMP" >>"$S/$name.log") 2>&1 &
                else
                        "$@" </dev/null > >(exec "$STAMP" >>"$S/$name.log") 2>&1 &
                fi
                echo $! >"$S/$name.pid"
                wait $!
        ) 2>/dev/null &
        DWAIT[$name]=$!
        for ((i = 0; i < 100; i++)); do
                [ -s "$S/$name.pid" ] && break
                sleep 0.01
        done
        DPID[$name]=$(cat "$S/$name.pid" 2>/dev/null)
}

daemon_alive() {
        local pid=${DPID[$1]:-}
        [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null
}

# daemon_signal NAME SIG: sends SIG to NAME (no wait).
daemon_signal() {
        local pid=${DPID[$1]:-}
        [ -n "$pid" ] && kill -"$2" "$pid" 2>/dev/null
}

# daemon_reap NAME: waits for NAME, which has ended; returns its status.
daemon_reap() {
        local rc=0
        wait "${DWAIT[$1]}" 2>/dev/null || rc=$?
        unset "DPID[$1]" "DWAIT[$1]"
        echo "$(now_us) ===== fault suite: $1 ended with status $rc" >>"$S/$1.log"
        return $rc
}

# daemon_stop NAME [SIG]: SIG (TERM), up to 10 s, then KILL; reaps it.
# Returns its exit status.
daemon_stop() {
        local name=$1 sig=${2:-TERM} pid
        pid=${DPID[$name]:-}
        [ -n "$pid" ] || return 0
        kill -"$sig" "$pid" 2>/dev/null || true
        kill -CONT "$pid" 2>/dev/null || true
        if ! wait_until 10 eval "! kill -0 $pid 2>/dev/null"; then
                log "$name (pid $pid) ignored SIG$sig for 10 s; killing it"
                kill -KILL "$pid" 2>/dev/null || true
        fi
        daemon_reap "$name"
}

daemons_stop_all() {
        local name
        for name in driver w1 w2 master master2; do
                daemon_stop "$name" || true
        done
        for name in "${!DPID[@]}"; do
                daemon_stop "$name" || true
        done
}

# --- the network namespace of a cut-off worker -----------------------------------------
#
# One namespace for the whole run, with a veth pair to the host: the host end
# has $HOST_IP (the master and the driver listen there, and every host
# process reaches it even while the link is down), the namespace end
# $NS_IP.  Addresses are a /30 of 10.0.0.0/8 that no interface of the
# machine uses; nothing routes beyond the pair.

NETNS='' VETH_HOST='' VETH_NS='' HOST_IP='' NS_IP=''

netns_setup() {
        local i a b used
        NETNS=sparkfault-$$
        VETH_HOST=sfh$$
        VETH_NS=sfn$$
        used=$(ip -4 -o addr show | awk '{ print $4 }')
        for ((i = 0; i < 50; i++)); do
                a=$((200 + RANDOM % 50))
                b=$((RANDOM % 256))
                grep -q "^10\.$a\.$b\." <<<"$used" || break
        done
        HOST_IP=10.$a.$b.1
        NS_IP=10.$a.$b.2
        ip netns add "$NETNS" || return 1
        ip link add "$VETH_HOST" type veth peer name "$VETH_NS" || return 1
        ip link set "$VETH_NS" netns "$NETNS" &&
                ip addr add "$HOST_IP/30" dev "$VETH_HOST" &&
                ip link set "$VETH_HOST" up &&
                ip -n "$NETNS" addr add "$NS_IP/30" dev "$VETH_NS" &&
                ip -n "$NETNS" link set "$VETH_NS" up &&
                ip -n "$NETNS" link set lo up || return 1
        log "network namespace $NETNS: host $VETH_HOST $HOST_IP <-> $VETH_NS $NS_IP"
}

netns_teardown() {
        [ -n "$NETNS" ] || return 0
        ip netns del "$NETNS" 2>/dev/null || true
        ip link del "$VETH_HOST" 2>/dev/null || true
        NETNS=''
}

netns_link() {
        ip -n "$NETNS" link set "$VETH_NS" "$1"
}

# netns_partition: every IP packet between the namespace and the host is
# dropped by tc filters on the namespace's end of the pair, both ways; the
# link stays up.  This kernel has the u32 classifier and the mirred action
# but not the gact or police actions (no "action drop"), and no dummy
# links: the filters redirect to one end of a second veth pair inside the
# namespace, whose other end discards frames addressed to another MAC.
netns_partition() {
        local sink=sfk$$ peer=sfp$$
        if ! ip -n "$NETNS" link show "$sink" >/dev/null 2>&1; then
                ip -n "$NETNS" link add "$sink" type veth peer name "$peer" &&
                        ip -n "$NETNS" link set "$sink" up && ip -n "$NETNS" link set "$peer" up || return 1
        fi
        tc -n "$NETNS" qdisc add dev "$VETH_NS" clsact &&
                tc -n "$NETNS" filter add dev "$VETH_NS" egress protocol ip prio 1 \
                        u32 match ip dst "$HOST_IP/32" action mirred egress redirect dev "$sink" &&
                tc -n "$NETNS" filter add dev "$VETH_NS" ingress protocol ip prio 1 \
                        u32 match ip src "$HOST_IP/32" action mirred egress redirect dev "$sink"
}

# netns_heal: the partition's filters removed (none: nothing to do).
netns_heal() {
        [ -n "$NETNS" ] || return 0
        tc -n "$NETNS" qdisc del dev "$VETH_NS" clsact 2>/dev/null || true
}

# --- a tmpfs work_dir ----------------------------------------------------------------
#
# Mounted before the user manager starts: the manager lives in a mount
# namespace of its own, copied from ours when it started, so only a mount
# made before then is the same file system for it (which chdirs into the
# executor's work dir) and for the worker (which makes that dir).

TMPFS_DIR=''

tmpfs_setup() {
        TMPFS_DIR=$T/tmpfs
        mkdir -p "$TMPFS_DIR" &&
                mount -t tmpfs -o size=256k,nr_inodes=64,mode=0755 "sparkfault-$$" "$TMPFS_DIR"
}

tmpfs_clear() {
        [ -n "$TMPFS_DIR" ] && mountpoint -q "$TMPFS_DIR" && find "$TMPFS_DIR" -mindepth 1 -delete 2>/dev/null
        return 0
}

tmpfs_teardown() {
        [ -n "$TMPFS_DIR" ] || return 0
        mountpoint -q "$TMPFS_DIR" && { umount "$TMPFS_DIR" 2>/dev/null || umount -l "$TMPFS_DIR" 2>/dev/null; }
        TMPFS_DIR=''
}

# fill_fs DIR: every block and every inode of the file system at DIR taken.
fill_fs() {
        local i
        mkdir -p "$1/fill"
        dd if=/dev/zero of="$1/fill/blocks" bs=4k 2>/dev/null || true
        for ((i = 0; i < 100000; i++)); do
                : 2>/dev/null >"$1/fill/i$i" || break
        done
        if mkdir "$1/fill/probe" 2>/dev/null; then
                log "warning: $1 still takes directories"
                return 1
        fi
}

# --- the cluster ----------------------------------------------------------------------

declare -A WLISTEN=() WEVENTS=() WDIR=() WID=() WNETNS=()

sparkctl() {
        "$SPARK_BUILD/sparkctl" --master "$MASTER_URL" --driver "$DRIVER_URL" "$@"
}

# cluster_config: writes $S/cluster.conf (master and driver) and, per worker,
# $S/wN.conf.  Knobs (set by the scenario before): W_NETNS[wN]=1 runs wN in
# the namespace; W_TMPFS[wN]=1 makes its work_dir a tiny tmpfs; MASTER_EXTRA
# is added to the (single) master's section.
cluster_config() {
        local mp mep dp dep w port eport host mp2 mep2 n l e cluster_line master_section m1host
        mp=$(free_port) && mep=$(free_port) && dp=$(free_port) && dep=$(free_port) || return 1
        MASTER_URL=tcp://$HOST_IP:$mp
        DRIVER_URL=tcp://$HOST_IP:$dp
        mkdir -p "$S/stamps"
        cluster_line="cluster: { master = \"$MASTER_URL\"; master_events = \"tcp://$HOST_IP:$mep\"; insecure = true; };"
        master_section="master: { listen = \"$MASTER_URL\"; events_listen = \"tcp://$HOST_IP:$mep\"; state_dir = \"$S/master-state\";
          worker_timeout_ms = $WORKER_TIMEOUT_MS; max_executor_retries = 10; driver_reconnect_ms = $DRIVER_RECONNECT_MS; $MASTER_EXTRA };"
        if [ "$HA" = 1 ]; then
                # two masters on the suite's ensemble (docs/ha.md): master
                # leads (started first), master2 stands by
                mp2=$(free_port) && mep2=$(free_port) || return 1
                m1host=$HOST_IP
                [ "$M_NETNS" = 1 ] && m1host=$NS_IP
                MASTER1_URL=tcp://$m1host:$mp MASTER2_URL=tcp://$HOST_IP:$mp2
                MASTER_URL="$MASTER1_URL,$MASTER2_URL"
                cluster_line="cluster: { master = \"$MASTER_URL\"; master_events = \"tcp://$m1host:$mep,tcp://$HOST_IP:$mep2\"; insecure = true; };"
                master_section=''
                for n in master master2; do
                        if [ $n = master ]; then l=$MASTER1_URL e=tcp://$m1host:$mep; else l=$MASTER2_URL e=tcp://$HOST_IP:$mep2; fi
                        cat >"$S/$n.conf" <<EOF
@include "cluster.conf"
master: { listen = "$l"; events_listen = "$e"; state_dir = "$S/$n-state";
          worker_timeout_ms = $WORKER_TIMEOUT_MS; max_executor_retries = 10; driver_reconnect_ms = $DRIVER_RECONNECT_MS;
          recovery_mode = "zookeeper"; zookeeper = "$ZK_CONNECT"; zookeeper_dir = "/spark-faults/$SCENARIO-$$";
          zookeeper_session_timeout_ms = $ZK_SESSION_TIMEOUT_MS; };
EOF
                done
        fi
        # Plaintext on $HOST_IP, beyond loopback: insecure, which is safe
        # here because the address exists only on our own veth pair.
        cat >"$S/cluster.conf" <<EOF
$cluster_line
$master_section
driver: { app_name = "fault-$SCENARIO"; listen = "$DRIVER_URL"; events_listen = "tcp://$HOST_IP:$dep";
          advertise_host = "$HOST_IP"; max_cores = $APP_CORES; cores_per_executor = 1;
          executor_memory_mb = $EXECUTOR_MEMORY_MB; task_max_failures = $TASK_MAX_FAILURES; locality_wait_ms = 0;
          executor_heartbeat_timeout_ms = $EXECUTOR_HEARTBEAT_TIMEOUT_MS;
          executor_env = { SPARK_FAULT_TASK_MS = "$TASK_MS"; SPARK_FAULT_STAMP_DIR = "$S/stamps"; };
          $([ "$DRIVER_STATE" = 1 ] && echo "state_dir = \"$S/driver-state\";") };
EOF
        for w in w1 w2; do
                port=$(free_port) && eport=$(free_port) || return 1
                if [ "${W_NETNS[$w]:-0}" = 1 ]; then
                        host=$NS_IP
                        WNETNS[$w]=$NETNS
                elif [ "$M_NETNS" = 1 ]; then
                        host=$HOST_IP
                        WNETNS[$w]=''
                else
                        host=127.0.0.1
                        WNETNS[$w]=''
                fi
                WLISTEN[$w]=tcp://$host:$port
                WEVENTS[$w]=tcp://$host:$eport
                WDIR[$w]=$S/$w-work
                if [ "${W_TMPFS[$w]:-0}" = 1 ]; then
                        tmpfs_clear
                        WDIR[$w]=$TMPFS_DIR/$w-work
                fi
                cat >"$S/$w.conf" <<EOF
@include "cluster.conf"
worker: { listen = "${WLISTEN[$w]}"; events_listen = "${WEVENTS[$w]}"; advertise_host = "$host";
          cores = $WORKER_CORES; memory_mb = 2048; heartbeat_ms = $WORKER_HEARTBEAT_MS; systemd_bus = "user";
          executor_binary = "$SPARK_BUILD/spark-executor"; executor_slice = "spark-faults.slice";
          work_dir = "${WDIR[$w]}";
          # the memory hog's stamps: the one place outside its work dir an executor writes
          executor_properties = [ "BindPaths=$S/stamps" ]; };
EOF
        done
}

status_json() {
        "$SPARK_BUILD/sparkctl" --master "${1:-$MASTER_URL}" status --json 2>/dev/null
}

# q JQ-FILTER [JQ-ARGS]: the filter on the master's status.
q() {
        local filter=$1
        shift
        status_json | jq -r "$@" "$filter" 2>/dev/null
}

master_answers() {
        status_json >/dev/null
}

worker_registered() {
        [ "$(q '.workers[] | select(.worker_id == $w) | .state' --arg w "${WID[$1]}")" = alive ]
}

worker_id_of() {
        local f
        for f in "${WDIR[$1]}"/worker-*.id; do
                [ -s "$f" ] && { head -n 1 "$f"; return 0; }
        done
        return 1
}

# master_start [master2]: with HA=1 either master of the pair.
master_start() {
        local n=${1:-master}
        if [ "$HA" = 1 ] && [ "$M_NETNS" = 1 ] && [ "$n" = master ]; then
                daemon_start "$n" --netns "$NETNS" "$SPARK_BUILD/spark-master" --config "$S/$n.conf"
        elif [ "$HA" = 1 ]; then
                daemon_start "$n" "$SPARK_BUILD/spark-master" --config "$S/$n.conf"
        else
                daemon_start master "$SPARK_BUILD/spark-master" --config "$S/cluster.conf"
        fi
}

# leads URL: that master answers as the leader (not as a standby).
leads() {
        "$SPARK_BUILD/sparkctl" --master "$1" status >/dev/null 2>&1
}

worker_start() {
        local w=$1
        if [ -n "${WNETNS[$w]}" ]; then
                daemon_start "$w" --netns "${WNETNS[$w]}" "$SPARK_BUILD/spark-worker" --config "$S/$w.conf"
        else
                daemon_start "$w" "$SPARK_BUILD/spark-worker" --config "$S/$w.conf"
        fi
}

driver_start() {
        daemon_start driver "$SPARK_BUILD/spark-driver" --config "$S/cluster.conf"
}

app_id() {
        q '.apps[] | select(.name == $n) | .app_id' --arg n "fault-$SCENARIO" | head -n 1
}

# executors APP [STATE]: "ID WORKER STATE" lines the master lists.
executors() {
        q '.executors[] | select(.app_id == $a and ($s == "" or .state == $s))
           | "\(.executor_id) \(.worker_id) \(.state)"' --arg a "$1" --arg s "${2:-}" | sort -n
}

# executors_on WORKER: "ID WORKER STATE" of the app's running executors on
# WORKER (w1, w2).
executors_on() {
        executors "$APP" running | awk -v w="${WID[$1]}" '$2 == w'
}

n_executors_on() {
        executors_on "$1" | grep -c .
}

# executor_main_pid ID: the main pid of executor ID's unit; fails if it has
# none.
executor_main_pid() {
        local pid
        pid=$(unit_main_pid "$(unit_of "$1")")
        [ -n "$pid" ] && [ "$pid" != 0 ] && echo "$pid"
}

n_running_executors() {
        local n
        n=$(executors "$APP" running | grep -c .) || true
        echo "${n:-0}"
}

running_executors_are() {
        [ "$(n_running_executors)" -ge "$1" ]
}

driver_registered_executors() {
        [ "$(count_lines driver 'Executor [0-9]+ registered')" -ge "$1" ]
}

# cluster_up: master, w1, w2, driver; returns once APP_CORES executors run
# and have registered with the driver.  Sets APP.
cluster_up() {
        local w
        cluster_config || { problem "cannot configure the cluster"; return 1; }
        master_start
        wait_until 10 master_answers || { problem "the master does not answer"; return 1; }
        if [ "$HA" = 1 ]; then
                wait_until 10 leads "$MASTER1_URL" || { problem "master was not elected leader"; return 1; }
                master_start master2
                wait_until 10 grep -q 'Standing for election' "$S/master2.log" ||
                        { problem "master2 did not stand for election"; return 1; }
        fi
        for w in w1 w2; do
                worker_start "$w"
        done
        for w in w1 w2; do
                wait_until 10 worker_id_of "$w" >/dev/null || { problem "worker $w wrote no id"; return 1; }
                WID[$w]=$(worker_id_of "$w")
                wait_until 10 worker_registered "$w" || { problem "worker $w did not register"; return 1; }
        done
        driver_start
        wait_until 10 eval '[ -n "$(app_id)" ]' || { problem "the application did not register"; return 1; }
        APP=$(app_id)
        wait_until 30 running_executors_are "$APP_CORES" ||
                { problem "$APP_CORES executors did not start"; return 1; }
        wait_until 30 driver_registered_executors "$APP_CORES" ||
                { problem "the executors did not register with the driver"; return 1; }
        log "cluster up: app $APP, workers ${WID[w1]} ${WID[w2]}, executors: $(executors "$APP" running | tr '\n' ',')"
}

# --- units and executor processes ----------------------------------------------------

# units [APP]: loaded spark-executor units (of APP), one a line.
units() {
        systemctl --user list-units --all --plain --no-legend "spark-executor-${1:-}*" 2>/dev/null |
                awk '{ print $1 }' | sort
}

active_units() {
        systemctl --user list-units --all --plain --no-legend "spark-executor-${1:-}*" 2>/dev/null |
                awk '$3 == "active" || $3 == "activating" || $3 == "deactivating" { print $1 }' | sort
}

unit_main_pid() {
        systemctl --user show -p MainPID --value "$1" 2>/dev/null
}

unit_of() {
        echo "spark-executor-$APP-$1.service"
}

# executor_pids: pids of spark-executor processes anywhere under the user
# manager's cgroup (our manager only: other runs may use the same binary).
executor_pids() {
        local d pid exe
        for d in $SPARK_TEST_CGROUP_DIRS; do
                [ -d "$d" ] || continue
                find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null
        done | sort -un | while read -r pid; do
                exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || continue
                [ "$exe" = "$SPARK_BUILD/spark-executor" ] && echo "$pid"
        done
}

n_of() {
        local n
        n=$("$@" | grep -c .) || true
        echo "${n:-0}"
}

# --- the job ----------------------------------------------------------------------------
#
# Two jobs run at once on the application, 5,000 tasks in all: command tasks
# (sh -c 'sleep TASK_MS/1000; echo $((N*N))', N = 0..2499) and function tasks
# (fault_square from spark-fault-tasks.so, N = 2500..4999, each sleeping
# TASK_MS ms).

prepare_inputs() {
        seq 0 $((CMD_TASKS - 1)) >"$S/cmd.in"
        seq "$CMD_TASKS" $((CMD_TASKS + FN_TASKS - 1)) >"$S/fn.in"
        # hog lines: "N hog" (HOG_TASKS: task indexes in the function job)
        local i
        for i in $HOG_TASKS; do
                sed -i "$((i + 1))s/\$/ hog/" "$S/fn.in"
        done
}

jobs_submit() {
        prepare_inputs
        sparkctl submit --json --name cmd --command "sleep $(printf '%d.%03d' $((TASK_MS / 1000)) $((TASK_MS % 1000))); echo \$(({}*{}))" --inputs "$S/cmd.in" \
                >"$S/cmd.json" 2>"$S/cmd.err" &
        SUBMIT_CMD=$!
        sparkctl submit --json --name fn --function "$TASK_LIB:fault_square" --inputs "$S/fn.in" \
                >"$S/fn.json" 2>"$S/fn.err" &
        SUBMIT_FN=$!
}

# results_written: outcomes sparkctl has written so far, both jobs.
results_written() {
        cat "$S/cmd.json" "$S/fn.json" 2>/dev/null | wc -l
}

jobs_under_way() {
        [ "$(results_written)" -ge "$1" ]
}

# jobs_wait TIMEOUT_S: waits for both submits; sets RC_CMD, RC_FN (124: still
# running at the deadline, then cancelled).
jobs_wait() {
        local deadline=$(($(date +%s) + $1)) p rc
        for p in SUBMIT_CMD SUBMIT_FN; do
                while kill -0 "${!p}" 2>/dev/null && [ "$(date +%s)" -lt "$deadline" ]; do
                        sleep 0.1
                done
        done
        RC_CMD=0
        RC_FN=0
        if kill -0 "$SUBMIT_CMD" 2>/dev/null; then kill -TERM "$SUBMIT_CMD"; RC_CMD=124; fi
        if kill -0 "$SUBMIT_FN" 2>/dev/null; then kill -TERM "$SUBMIT_FN"; RC_FN=124; fi
        wait "$SUBMIT_CMD"
        rc=$?
        [ $RC_CMD = 124 ] || RC_CMD=$rc
        wait "$SUBMIT_FN"
        rc=$?
        [ $RC_FN = 124 ] || RC_FN=$rc
        SUBMIT_CMD='' SUBMIT_FN=''
}

# check_results JSON FIRST_N COUNT: "lost dup retried" for one job's output:
# lost = tasks without exactly-right ok output, dup = outcome lines beyond
# one per task, retried = tasks that took more than one attempt.
check_results() {
        jq -r '"\(.task) \(.status) \(.attempts) \(.output | rtrimstr("\n"))"' "$1" 2>/dev/null |
                awk -v first="$2" -v n="$3" '
                { lines++; seen[$1]++
                  if ($2 == "ok" && $4 == ($1 + first) * ($1 + first) && $1 >= 0 && $1 < n) good[$1] = 1
                  if ($3 > 1 && seen[$1] == 1) retried++ }
                END { for (i = 0; i < n; i++) if (!(i in good)) lost++
                      for (t in seen) if (seen[t] > 1) dup += seen[t] - 1
                      printf "%d %d %d\n", lost, dup, retried }'
}

# --- checks after a scenario -------------------------------------------------------------

worker_answers() {
        "$SPARK_BUILD/sparkctl" --master "${WLISTEN[$1]}" status --json >/dev/null 2>&1
}

driver_answers() {
        sparkctl jobs >/dev/null 2>&1
}

# every_daemon_answers [driver]: master and both workers (and the driver).
every_daemon_answers() {
        local w ok=0
        wait_until 5 master_answers || { problem "the master does not answer sparkctl status"; ok=1; }
        for w in w1 w2; do
                wait_until 5 worker_answers "$w" || { problem "worker $w does not answer sparkctl status"; ok=1; }
        done
        if [ "${1:-}" = driver ]; then
                wait_until 5 driver_answers || { problem "the driver does not answer sparkctl jobs"; ok=1; }
        fi
        return $ok
}

# units_match_master: every active unit of the app is an executor the
# master lists running, and the other way round.
units_match_master() {
        local want have
        want=$(executors "$APP" running | awk -v a="$APP" '{ print "spark-executor-" a "-" $1 ".service" }' | sort)
        have=$(active_units "$APP")
        [ "$want" = "$have" ]
}

# stray_units: active units of the app the master does not list running.
stray_units() {
        local want
        want=$(executors "$APP" running | awk -v a="$APP" '{ print "spark-executor-" a "-" $1 ".service" }' | sort)
        comm -13 <(echo "$want") <(active_units "$APP") | grep .
}

no_units_left() {
        [ -z "$(units)" ] && [ -z "$(executor_pids)" ]
}

master_forgot_app() {
        [ -z "$(q '.apps[] | select(.app_id == $a) | .app_id' --arg a "$APP")" ] &&
                [ -z "$(executors "$APP" | grep -E ' (running|launching)$')" ]
}
