#!/usr/bin/env bash
# The benchmarks of docs/DESIGN.md §10 (see bench/README.md): every figure beside a
# baseline measured in this same run, one table on stdout and in
# bench/results/<date>.md.  Run by `make bench` (as root: it starts a private
# systemd user manager, tests/harness/usermgr.sh).
#
# Environment:
#   SPARK_BUILD        the build dir (default build/)
#   SPARK_PEERS        the peers' folder (default ../shared/peers)
#   BENCH_WORKERS, BENCH_WORKER_CORES, BENCH_APPS, BENCH_APP_EXECUTORS,
#   BENCH_SMALL_APPS   master scale (10000, 10, 10, 9900, 1000: 100,000
#                      executors in all, the cluster's cores)
#   BENCH_KILL_TRIALS  executor SIGKILL trials (20)
#   BENCH_SCRAPES      scrapes of the loaded master at rest, 100 ms apart, by
#                      master-load before it ends (100)
#   BENCH_LATE_WORKERS workers registered after the scale phase's apps, each
#                      5 times, one registration every 2.5 ms, in 100 ms
#                      windows with and without a /metrics scrape every
#                      100 ms (8000; 0: none)
#   BENCH_SKIP         space-separated phases to leave out (scale-fair: the
#                      master scale phase again with master.scheduling "fair";
#                      fair: a second application's share by preemption): baselines
#                      throughput latency durable memory tools loss freeze drain worker elastic scale
#                      scale-fair fair failover scale-zk dask jobs-api
#   BENCH_FAILOVER_TRIALS  leader SIGKILLs of the failover row (5)
#   BENCH_MEMORY_TASKS the tasks of the driver memory row (10000000)
#   BENCH_JOBS_API_TASKS  the empty tasks of each job of the jobs-api phase
#                      (1000000): the driver's /api/v1/jobs polled every
#                      100 ms during one job, beside the same job unpolled
#   BENCH_TOOLS_TRUE, BENCH_TOOLS_GZIP, BENCH_TOOLS_ROUNDS
#                      the rows against xargs and GNU parallel: `true`
#                      tasks (10000), gzip'd 64 KiB files (2000), rounds (2)
#   BENCH_KEEP=1       keep the temp dir with every log
#   BENCH_TLS=1        every cluster endpoint on tls+tcp:// with role
#                      certificates (tools/spark-tls) made in the temp dir,
#                      the nng baselines over mutual TLS; the master scale
#                      and Dask phases are left out
#   BENCH_RESULTS      where to write the table (default bench/results/DATE.md)
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD

# ^C reaches every process of the terminal's group, and a bash script honours
# it badly (a trap waits for the foreground command to end, and is skipped
# when that command did not die of the signal).  So this shell only
# supervises: the run is a child that ignores SIGINT and gets TERM instead,
# which it answers within a few milliseconds by cleaning up.
if [ "${1:-}" != --run ]; then
        "$top/bench/run.sh" --run &
        run=$!
        trap 'kill -TERM "$run" 2>/dev/null || true' INT TERM HUP
        rc=0
        while :; do
                wait "$run" && rc=0 || rc=$?
                kill -0 "$run" 2>/dev/null || break
        done
        exit "$rc"
fi
trap '' INT
B=${SPARK_BUILD:-$top/build}
BT=$B/bench
PEERS=${SPARK_PEERS:-$top/../shared/peers}
WORKERS=${BENCH_WORKERS:-10000}
WORKER_CORES=${BENCH_WORKER_CORES:-10}
APPS=${BENCH_APPS:-10}
APP_EXECUTORS=${BENCH_APP_EXECUTORS:-9900}
SMALL_APPS=${BENCH_SMALL_APPS:-1000}
LATE_WORKERS=${BENCH_LATE_WORKERS:-8000}
KILL_TRIALS=${BENCH_KILL_TRIALS:-20}
SKIP=" ${BENCH_SKIP:-} "
TLS=${BENCH_TLS:-0}
case $TLS in 0|'') TLS=0 ;; 1) ;; *) echo "bench: BENCH_TLS must be 0 or 1, not '$TLS'" >&2; exit 1 ;; esac
# master-load speaks plain tcp with no certificate, and the peer has no TLS
# set up here: over TLS those phases would measure nothing of ours; the
# jobs-api poller speaks plain HTTP, and a TLS driver serves HTTPS
[ "$TLS" = 1 ] && SKIP="$SKIP scale scale-fair dask jobs-api "
HB_TIMEOUT_MS=2000         # driver.executor_heartbeat_timeout_ms
WORKER_TIMEOUT_MS=2000     # master.worker_timeout_ms
TASKS_LIB=$B/tests/helpers/tasks/spark-test-tasks.so
NOTES=()
declare -A R=()            # every raw figure, for the appendix

# shellcheck source=bench/lib.sh
. bench/lib.sh
# shellcheck source=bench/elastic.sh
. bench/elastic.sh

skip() { [[ $SKIP == *" $1 "* ]]; }

[ "$(id -u)" = 0 ] || { say "needs root (a private systemd user manager: namespaces, cgroups)"; exit 1; }
for p in spark-master spark-worker spark-driver spark-executor sparkctl bench/bench-tool bench/bench-client \
         bench/nng-baseline bench/unit-baseline bench/master-load bench/stamp; do
        [ -x "$B/$p" ] || { say "$B/$p is not built (make bench-build)"; exit 1; }
done
[ -f "$TASKS_LIB" ] || { say "$TASKS_LIB is not built"; exit 1; }

# What else on the host slows every process now and then, said beside the
# figures it moves: the kernel's DAMON, sampling physical memory (and
# marking the pages it samples old).  On our host, the master's request
# after each sample took a few ms more, while the cores were idle.
for d in /sys/kernel/mm/damon/admin/kdamonds/*/; do
        [ "$(cat "$d/state" 2>/dev/null)" = on ] || continue
        for c in "$d"contexts/*/; do
                note "the host's kernel runs DAMON ($(cat "$c/operations" 2>/dev/null || echo '?') monitoring, a sample every $(( $(cat "$c/monitoring_attrs/intervals/sample_us" 2>/dev/null || echo 0) / 1000 )) ms): the request after a sample takes a few ms more; the p99 rows take that in"
        done
done

# Not under /tmp: executors run with PrivateTmp= and must see their work
# dirs, task libraries and the driver's ipc:// socket.
mkdir -p "${SPARK_TEST_ROOT:=/var/lib/spark-test}"
tmp=$(mktemp -d "$SPARK_TEST_ROOT/bench.XXXXXX")
um_started=
failed=1
cleanup() {
        local rc=$?
        trap - EXIT INT TERM
        [ -n "${SUBMIT_PID:-}" ] && stop_pid "$SUBMIT_PID" TERM
        [ -n "${DASK_PID:-}" ] && stop_pid "$DASK_PID" TERM
        [ -n "${LOAD_PID:-}" ] && stop_pid "$LOAD_PID" TERM # timeout(1) passes it on
        [ -n "${FG_PID:-}" ] && stop_pid "$FG_PID" TERM
        [ -n "${POLL_PID:-}" ] && stop_pid "$POLL_PID" TERM
        # drivers first: each unregisters its app, so its executor units go
        for name in "${!DAEMON_PID[@]}"; do
                case $name in driver*) stop_daemon "$name" ;; esac
        done
        for name in "${!DAEMON_PID[@]}"; do stop_daemon "$name"; done
        for pid in "${ALL_PIDS[@]}"; do stop_pid "$pid" KILL; done
        [ -z "${ZK_STARTED:-}" ] || tests/harness/zk.sh stop "$tmp/zk" >/dev/null 2>&1 || true
        if [ -n "$um_started" ]; then
                systemctl --user stop 'spark-executor-*' 2>/dev/null || true
                tests/harness/usermgr.sh stop "$tmp/um" >/dev/null 2>&1 || true
        fi
        if [ "$failed" = 1 ] || [ "${BENCH_KEEP:-}" = 1 ]; then
                say "logs kept in $tmp"
                [ "$failed" = 1 ] && for f in "$tmp"/*.log; do
                        [ -f "$f" ] && { echo "--- $f" >&2; tail -n 8 "$f" >&2; }
                done
        else
                rm -rf "$tmp"
        fi
        exit "$rc"
}
trap cleanup EXIT
trap 'say stopping; exit 143' TERM HUP
# run_fg CMD...: CMD (anything that may take seconds) as a background job
# that we wait for: bash runs the TERM trap only once a foreground command
# has ended, whereas `wait` returns at once; the clean-up then stops CMD.
FG_PID=
run_fg() {
        local rc=0
        "$@" &
        FG_PID=$!
        wait "$FG_PID" || rc=$?
        FG_PID=
        return $rc
}

T_START=$SECONDS
busy_pct() {
        local a b
        a=($(head -n 1 /proc/stat)); sleep 1; b=($(head -n 1 /proc/stat))
        awk -v a="${a[*]:1}" -v b="${b[*]:1}" 'BEGIN {
                n = split(a, x, " "); split(b, y, " "); t = 0
                for (i = 1; i <= n; i++) t += y[i] - x[i]
                idle = (y[4] - x[4]) + (y[5] - x[5]); printf("%.0f\n", 100 * (1 - idle / t)) }'
}
BUSY_BEFORE=$(busy_pct)
say "machine ${BUSY_BEFORE}% busy before the run (2 cores; other runs move every figure: read the ratios)"

base=$(pick_port_base) || { say "no free block of ports"; exit 1; }
P_MASTER=$((base)) P_MASTER_EV=$((base + 1))
SCHEME=tcp
[ "$TLS" = 1 ] && SCHEME=tls+tcp
url() { echo "$SCHEME://127.0.0.1:$1"; }
tcp_url() { echo "tcp://127.0.0.1:$1"; }

# ================================================================= TLS
# With BENCH_TLS=1: a CA and a certificate per role from tools/spark-tls
# (docs/security.md): the master, each worker, one for every driver, and
# the client's, which bench-client, sparkctl and the nng baseline's req
# side present: an admin's, since the drain and the durable driver's rows
# need one.  CLIENT_ENV runs a client with it.
TLS_DIR=$tmp/tls
CLIENT_ENV=() BASELINE_ENV=()
# tls_keys NAME: the config lines of a daemon's certificate
tls_keys() {
        [ "$TLS" = 1 ] || return 0
        echo "tls_cert_file = \"$TLS_DIR/$1.pem\"; tls_key_file = \"$TLS_DIR/$1.key\";"
}
make_certificates() {
        local c
        say "TLS: a CA and role certificates (tools/spark-tls) in $TLS_DIR"
        tools/spark-tls ca "$TLS_DIR" >"$tmp/spark-tls.log" 2>&1 || return 1
        for c in "master master" "worker worker1" "worker worker2" "driver driver" "admin bench"; do
                # shellcheck disable=SC2086
                set -- $c
                tools/spark-tls "$1" "$TLS_DIR" "$2" 127.0.0.1 >>"$tmp/spark-tls.log" 2>&1 || return 1
        done
        CLIENT_ENV=(env "SPARK_TLS_CA_FILE=$TLS_DIR/ca.pem" "SPARK_TLS_CERT_FILE=$TLS_DIR/bench.pem"
                    "SPARK_TLS_KEY_FILE=$TLS_DIR/bench.key")
        # nng-baseline's rep side stands for the driver: its certificate
        BASELINE_ENV=("${CLIENT_ENV[@]}" "BENCH_TLS_SERVER_CERT_FILE=$TLS_DIR/driver.pem"
                      "BENCH_TLS_SERVER_KEY_FILE=$TLS_DIR/driver.key")
}
if [ "$TLS" = 1 ]; then
        make_certificates || { cat "$tmp/spark-tls.log" >&2; say "cannot make the certificates"; exit 1; }
fi

# ============================================================ baselines
# unit_samples FILE: the samples of a unit-baseline run, in the order taken
unit_samples() {
        awk -v k="${2:-unit_start_us}_samples" '$1 == k { $1 = ""; sub(/^ /, ""); print; exit }' "$1"
}

run_baselines() {
        say "baselines: nng req/rep rate (64 contexts, $SCHEME), round trip, StartTransientUnit"
        run_fg "${BASELINE_ENV[@]}" "$BT/nng-baseline" rate "$(url $((base + 80)))" 64 3 >"$tmp/nng-rate.out" || return 1
        R[nng_rate]=$(kv "$tmp/nng-rate.out" rate_msgs_per_s)
        run_fg "${BASELINE_ENV[@]}" "$BT/nng-baseline" rtt "$(url $((base + 81)))" 5000 >"$tmp/nng-rtt.out" || return 1
        R[nng_rtt_p50]=$(kv "$tmp/nng-rtt.out" rtt_us_p50)
        R[nng_rtt_p99]=$(kv "$tmp/nng-rtt.out" rtt_us_p99)
        R[nng_rtt_ctxsw]="$(kv "$tmp/nng-rtt.out" rtt_ctxsw_server) $(kv "$tmp/nng-rtt.out" rtt_ctxsw_client)"
        if [ "$TLS" = 1 ]; then
                # the same over plain tcp: what TLS itself costs nng (info)
                run_fg "$BT/nng-baseline" rate "$(tcp_url $((base + 82)))" 64 3 >"$tmp/nng-rate-tcp.out" || return 1
                R[nng_rate_tcp]=$(kv "$tmp/nng-rate-tcp.out" rate_msgs_per_s)
                run_fg "$BT/nng-baseline" rtt "$(tcp_url $((base + 83)))" 5000 >"$tmp/nng-rtt-tcp.out" || return 1
                R[nng_rtt_tcp_p50]=$(kv "$tmp/nng-rtt-tcp.out" rtt_us_p50)
        fi
        # each start after 250 ms of quiet, as an application's first
        # executor comes: the kernel then makes the move into the new cgroup
        # wait for an RCU grace period (bench/unit-baseline.c); back to back,
        # the same call skips that wait (an info row)
        run_fg "$BT/unit-baseline" "$BT/stamp" 20 250 >"$tmp/unit.out" || return 1
        R[unit_p50]=$(kv "$tmp/unit.out" unit_start_us_p50)
        R[unit_p99]=$(kv "$tmp/unit.out" unit_start_us_p99)
        run_fg "$BT/unit-baseline" "$BT/stamp" 30 0 >"$tmp/unit-warm.out" || return 1
        R[unit_warm_p50]=$(kv "$tmp/unit-warm.out" unit_start_us_p50)
        # the same with some of the properties a worker gives an executor
        # (no sandbox), and with all of them, made by the worker's own
        # builder, sandbox included: an application's first executor is
        # compared with that one.  Also the time to the PropertiesChanged
        # that says "active" (what the worker waits for).
        run_fg "$BT/unit-baseline" "$BT/stamp" 20 250 spark-bench.slice >"$tmp/unit-props.out" || return 1
        R[unit_props_p50]=$(kv "$tmp/unit-props.out" unit_start_us_p50)
        R[unit_props_active_p50]=$(kv "$tmp/unit-props.out" unit_active_us_p50)
        mkdir -p "$tmp/unit-work"
        run_fg "$BT/unit-baseline" "$BT/stamp" 20 250 spark-bench.slice "$tmp/unit-work" >"$tmp/unit-exec.out" || return 1
        R[unit_exec_p50]=$(kv "$tmp/unit-exec.out" unit_start_us_p50)
        R[unit_exec_p99]=$(kv "$tmp/unit-exec.out" unit_start_us_p99)
        R[unit_exec_samples]=$(unit_samples "$tmp/unit-exec.out")
        R[unit_exec_active_p50]=$(kv "$tmp/unit-exec.out" unit_active_us_p50)
        # two such units started together, as the two workers on this host
        # start an application's two executors: the first one's start
        mkdir -p "$tmp/unit-work2"
        UNIT_BASELINE_AT_ONCE=2 run_fg "$BT/unit-baseline" "$BT/stamp" 20 250 spark-bench.slice "$tmp/unit-work2" \
                >"$tmp/unit-exec2.out" || return 1
        R[unit_exec2_p50]=$(kv "$tmp/unit-exec2.out" unit_first_of_2_us_p50)
        R[unit_exec2_samples]=$(unit_samples "$tmp/unit-exec2.out" unit_first_of_2_us)
        say "  nng ${R[nng_rate]} msg/s, rtt p50 ${R[nng_rtt_p50]} µs; unit start p50 ${R[unit_p50]} µs" \
                "(back to back ${R[unit_warm_p50]} µs; an executor's properties ${R[unit_props_p50]} µs;" \
                "all of them, sandbox included, ${R[unit_exec_p50]} µs)"
}

# ============================================================== cluster
write_confs() {
        local ca='' adv=''
        if [ "$TLS" = 1 ]; then
                ca="tls_ca_file = \"$TLS_DIR/ca.pem\";"
                adv='advertise_host = "127.0.0.1";'
        fi
        cat >"$tmp/cluster.conf" <<EOF
cluster: { master = "$(url $P_MASTER)"; master_events = "$(url $P_MASTER_EV)"; $ca };
master: { listen = "$(url $P_MASTER)"; events_listen = "$(url $P_MASTER_EV)";
          state_dir = "$tmp/state"; worker_timeout_ms = $WORKER_TIMEOUT_MS; max_executor_retries = 10000;
          $(tls_keys master) };
EOF
        for i in 1 2; do
                cat >"$tmp/worker$i.conf" <<EOF
@include "cluster.conf"
worker: { listen = "$(url $((base + 2 + 2 * i)))"; events_listen = "$(url $((base + 3 + 2 * i)))";
          cores = 4; memory_mb = 4096; systemd_bus = "user"; work_dir = "$tmp/work$i"; heartbeat_ms = 500;
          executor_binary = "$B/spark-executor"; executor_slice = "spark-bench.slice"; $adv
          $(tls_keys "worker$i") };
EOF
        done
}

start_cluster() {
        write_confs
        start_daemon master "$B/spark-master" --config "$tmp/cluster.conf"
        start_daemon worker1 "$B/spark-worker" --config "$tmp/worker1.conf"
        start_daemon worker2 "$B/spark-worker" --config "$tmp/worker2.conf"
        wait_log "$tmp/master.log" "Worker .* registered" 0 20 || return 1
        for _ in $(seq 200); do
                [ "$(log_count "$tmp/master.log" "Worker .* registered")" -ge 2 ] && return 0
                sleep 0.05
        done
        return 1
}

DRIVER_N=0
DRIVER=            # the running driver's name (its log is $tmp/$DRIVER.log)
DRIVER_URL=
# start_driver EXECUTORS: a driver whose app gets EXECUTORS executors of one
# core; waits until all have registered.  Adds a sample, the master's
# "Application … registered" → the driver's first "Executor … registered",
# to STARTUP_MS for an app of one executor, to STARTUP2_MS for one of two:
# the raw start each is compared with starts as many units at once
# (bench/README.md).
STARTUP_MS=()
STARTUP2_MS=()
start_driver() {
        local e=$1 name t_app t_exec n
        DRIVER_N=$((DRIVER_N + 1))
        name=driver$DRIVER_N
        DRIVER_URL=$(url $((base + 20 + 2 * DRIVER_N)))
        local tls_lines=''
        # executors hold no certificate: over TLS they dial an endpoint of
        # their own (docs/security.md); ports base+60.. (19 drivers at most)
        [ "$TLS" = 1 ] && tls_lines="executor_listen = \"$(url $((base + 59 + DRIVER_N)))\"; advertise_host = \"127.0.0.1\";
          $(tls_keys driver)"
        cat >"$tmp/$name.conf" <<EOF
@include "cluster.conf"
driver: { app_name = "bench-$name"; listen = "$DRIVER_URL"; events_listen = "$(url $((base + 21 + 2 * DRIVER_N)))";
          max_cores = $e; cores_per_executor = 1; executor_memory_mb = 256; task_max_failures = 1000;
          locality_wait_ms = 0; executor_heartbeat_timeout_ms = $HB_TIMEOUT_MS; $tls_lines
          ${DRIVER_EXTRA:-} };
EOF
        # One waiter for the first executor, in place before the driver
        # starts: a wait begun between the two lines (a fork of this shell
        # and an exec) took 10 to 15 ms of the 2 cores inside the very
        # interval it measures, which the raw start it is compared with
        # does not share.  The application's line is read afterwards.
        "$BT/bench-tool" waitlog "$tmp/$name.log" "Executor [0-9]+ registered" 0 50 >"$tmp/wait-first.$name" &
        FG_PID=$!
        start_daemon "$name" "$B/spark-driver" --config "$tmp/$name.conf"
        DRIVER=$name
        wait "$FG_PID" || { FG_PID=; say "$name: no executor registered"; return 1; }
        FG_PID=
        read -r t_exec <"$tmp/wait-first.$name" || { say "$name: no executor registered"; return 1; }
        t_app=$(log_time "$tmp/master.log" "Application .* \\(bench-$name\\) registered")
        [ -n "$t_app" ] || { say "$name: the master did not register its application"; return 1; }
        case $e in
        1)
                STARTUP_MS+=("$(ms_between "$t_app" "$t_exec" 2)")
                startup_breakdown "$name" "$t_app" "$t_exec"
                ;;
        2) STARTUP2_MS+=("$(ms_between "$t_app" "$t_exec" 2)") ;;
        esac
        for _ in $(seq 600); do
                n=$(log_count "$tmp/$name.log" "Executor [0-9]+ registered")
                [ "$n" -ge "$e" ] && return 0
                sleep 0.05
        done
        say "$name: $n of $e executors registered"
        return 1
}

# Where the start-up time of the first executor goes, from the daemons' own
# lines and systemd's own timestamps of the unit (CLOCK_MONOTONIC, as ours):
#   1 master "Application … registered" → master "Launching executor"
#   2 → the worker logs "Launching executor" (StartTransientUnit sent)
#   3 → systemd forked the unit's process (ExecMainStartTimestampMonotonic)
#   4 → the unit active (ActiveEnterTimestampMonotonic: a Type=exec unit
#       is active once its execve() succeeded): the sandbox and the exec
#   5 the unit active → the worker logs it
#   6 the unit active → the executor registered with its driver (its
#     start-up, dial and handshake, and the driver's part)
# Appends "1 2 3 4 5 6" (ms) to STARTUP_STEPS.  The unit is read while it
# runs (it is collected when it ends).
STARTUP_STEPS=()
startup_breakdown() {
        local name=$1 t_app=$2 t_exec=$3 app id unit t_place t_launch t_active props
        local t_exec_main t_active_enter
        app=$(awk -v re="Application app-[0-9]+-[0-9]+ \\\\(bench-$name\\\\) registered" \
                '$0 ~ re { for (i = 1; i <= NF; i++) if ($i ~ /^app-[0-9]+-[0-9]+$/) { print $i; exit } }' "$tmp/master.log")
        read -r id unit < <(awk '/Executor [0-9]+ registered from/ {
                for (i = 1; i <= NF; i++) { if ($i == "Executor" && !id) id = $(i + 1); if ($i == "unit") u = $(i + 1) }
                print id, u; exit }' "$tmp/$name.log") || true
        [ -n "$app" ] && [ -n "$id" ] || return 0
        props=$(systemctl --user show -p ExecMainStartTimestampMonotonic -p ActiveEnterTimestampMonotonic "$unit" \
                2>/dev/null) || true
        t_exec_main=$(sed -n 's/^ExecMainStartTimestampMonotonic=//p' <<<"$props")
        t_active_enter=$(sed -n 's/^ActiveEnterTimestampMonotonic=//p' <<<"$props")
        t_place=$(log_time "$tmp/master.log" "Launching executor $app/$id " "$t_app")
        t_launch=$(cat "$tmp"/worker[12].log | sort -n | awk -v re="Launching executor $app/$id:" '$0 ~ re { print $1; exit }')
        t_active=$(cat "$tmp"/worker[12].log | sort -n | awk -v re="Executor $app/$id running as" '$0 ~ re { print $1; exit }')
        [ -n "$t_place" ] && [ -n "$t_launch" ] && [ -n "$t_active" ] && [ "${t_exec_main:-0}" -gt 0 ] &&
                [ "${t_active_enter:-0}" -gt 0 ] || return 0
        STARTUP_STEPS+=("$(awk -v a="$t_app" -v b="$t_place" -v c="$t_launch" -v d="$t_exec_main" -v e="$t_exec" \
                -v f="$t_active_enter" -v g="$t_active" 'BEGIN {
                printf("%.2f %.2f %.2f %.2f %.2f %.2f", (b - a) / 1000, (c - b) / 1000, (d - c) / 1000,
                       (f - d) / 1000, (g - f) / 1000, (e - f) / 1000) }')")
}

executor_units() { systemctl --user list-units --no-legend --plain 'spark-executor-*' 2>/dev/null | grep -c . || true; }

# stop_driver: TERM (it unregisters its app), then waits for its executor
# units to be gone so that they do not disturb the next figure.
stop_driver() {
        [ -n "$DRIVER" ] || return 0
        stop_daemon "$DRIVER"
        DRIVER=
        for _ in $(seq 200); do
                [ "$(executor_units)" -eq 0 ] && return 0
                sleep 0.05
        done
        say "executor units still there after their driver stopped"
}

# The pid of executor ID from the driver's registration line.
executor_pid() {
        awk -v id="$1" '$0 ~ "Executor " id " registered from" { sub(/.* pid /, ""); sub(/,.*/, ""); print; exit }' \
                "$tmp/$DRIVER.log"
}
latest_executor() {
        awk '/Executor [0-9]+ registered from/ { for (i = 1; i <= NF; i++) if ($i == "Executor") id = $(i + 1) }
             END { print id }' "$tmp/$DRIVER.log"
}

rss_of() { "$BT/bench-tool" rss "$1" 2>/dev/null || echo "n/a n/a"; }

# ========================================================== throughput
# throughput E SYMBOL ARG COUNT: median tasks/s over 3 jobs.
throughput_runs() {
        local key=$1 sym=$2 arg=$3 count=$4 runs=() i out
        for i in 1 2 3; do
                out=$tmp/tput-$key-$i.out
                run_fg "${CLIENT_ENV[@]}" timeout 120 "$BT/bench-client" throughput "$DRIVER_URL" "$TASKS_LIB" "$sym" "$arg" "$count" >"$out" \
                        2>>"$tmp/client.log" || { say "  $key: job $i failed"; return 1; }
                runs+=("$(kv "$out" tasks_per_s)")
        done
        R[tput_$key]=$(printf '%s\n' "${runs[@]}" | median)
        R[tput_${key}_runs]="${runs[*]} (count $count)"
        say "  $key: ${R[tput_$key]} tasks/s (runs: ${runs[*]}; $count tasks each)"
}

measure_throughput() {
        local e=$1 warm count
        # size the jobs to about 1 s each from a warm-up job (a job far
        # shorter than that measures its start and end, and the noise)
        run_fg "${CLIENT_ENV[@]}" timeout 120 "$BT/bench-client" throughput "$DRIVER_URL" "$TASKS_LIB" empty "" 50000 >"$tmp/warm-$e.out" \
                2>>"$tmp/client.log" || { say "  warm-up job failed"; return 1; }
        warm=$(kv "$tmp/warm-$e.out" tasks_per_s)
        count=$(awk -v r="$warm" 'BEGIN { n = int(r * 2); if (n < 100000) n = 100000; if (n > 3000000) n = 3000000; print n }')
        throughput_runs "empty_$e" empty "" "$count" || return 1
        throughput_runs "1ms_$e" sleep_ms 1 $((e * 1500)) || return 1
}

# ============================================================ latency
# Context switches of PROCESS (all its threads; with "nng", only nng's own
# threads): where a one-task job's time goes beyond its four messages is
# mostly threads handing work to each other.
ctxsw_of() {
        "$BT/bench-tool" ctxsw "$1" ${2:+"$2:"} 2>/dev/null || echo 0
}
# the pids of the running driver's executors
driver_executor_pids() {
        awk '/Executor [0-9]+ registered from/ { sub(/.* pid /, ""); sub(/,.*/, ""); print }' "$tmp/$DRIVER.log"
}

# One round of the one-task rows: a raw nng round trip (nng-baseline, 1,000
# of them) and then the running driver's one-task jobs, back to back, so
# that each ratio compares the two in the same moment of this shared
# machine.  Appends to R[lat_*_runs].
LATENCY_JOBS=${BENCH_LATENCY_JOBS:-1000}
latency_round() {
        local round=$1
        run_fg "${BASELINE_ENV[@]}" "$BT/nng-baseline" rtt "$(url $((base + 83 + round)))" 1000 \
                >"$tmp/latency-rtt-$round.out" || return 1
        run_fg "${CLIENT_ENV[@]}" timeout 120 "$BT/bench-client" latency "$DRIVER_URL" "$TASKS_LIB" empty "" "$LATENCY_JOBS" \
                >"$tmp/latency-$round.out" 2>>"$tmp/client.log" || return 1
        local rtt p50 p99
        rtt=$(kv "$tmp/latency-rtt-$round.out" rtt_us_p50)
        p50=$(kv "$tmp/latency-$round.out" latency_us_p50)
        p99=$(kv "$tmp/latency-$round.out" latency_us_p99)
        R[lat_rtt_runs]+="$rtt " R[lat_p50_runs]+="$p50 " R[lat_p99_runs]+="$p99 "
        R[lat_p50_ratio_runs]+="$(ratio "$p50" "$rtt") " R[lat_p99_ratio_runs]+="$(ratio "$p99" "$rtt") "
}

# The first round, on the driver of 2 executors that the throughput rows
# used, with the context switches of its jobs (bench-client's warm-up jobs
# too: 5 %, at least 5).
measure_latency() {
        local jobs p d0 dn0 e0=0 en0=0 e1=0 en1=0
        jobs=$((LATENCY_JOBS + (LATENCY_JOBS / 20 > 5 ? LATENCY_JOBS / 20 : 5)))
        d0=$(ctxsw_of "${DAEMON_PID[$DRIVER]}") dn0=$(ctxsw_of "${DAEMON_PID[$DRIVER]}" nng)
        for p in $(driver_executor_pids); do
                e0=$((e0 + $(ctxsw_of "$p"))) en0=$((en0 + $(ctxsw_of "$p" nng)))
        done
        latency_round 1 || return 1
        for p in $(driver_executor_pids); do
                e1=$((e1 + $(ctxsw_of "$p"))) en1=$((en1 + $(ctxsw_of "$p" nng)))
        done
        R[lat_ctxsw]=$(awk -v d="$(( $(ctxsw_of "${DAEMON_PID[$DRIVER]}") - d0 ))" \
                -v dn="$(( $(ctxsw_of "${DAEMON_PID[$DRIVER]}" nng) - dn0 ))" -v e="$((e1 - e0))" -v en="$((en1 - en0))" \
                -v n="$jobs" 'BEGIN { printf("%.1f %.1f %.1f %.1f", d / n, dn / n, e / n, en / n) }')
        say "  submit→result (round 1) p50 $(kv "$tmp/latency-1.out" latency_us_p50) µs," \
                "p99 $(kv "$tmp/latency-1.out" latency_us_p99) µs, raw round trip p50" \
                "$(kv "$tmp/latency-rtt-1.out" rtt_us_p50) µs; context switches per job" \
                "(driver, of which nng; executors, of which nng): ${R[lat_ctxsw]}"
}

# Rounds 2 and 3, each on a new driver of 2 executors: a driver's one-task
# p50 is steady within its jobs but moves by a fifth or more from one
# driver to the next here (232 to 348 µs among four new drivers of one
# tree within minutes), as the raw round trip moves from one minute to the
# next (121 to 192 µs among the runs of one day).  The rows take the
# median of the three rounds' figures, each round's raw round trip
# measured just before it; the ratios are the median of the rounds' own
# ratios (a round's two figures come from the same moment, the medians of
# each kind from different ones).
measure_latency_rounds() {
        local round
        for round in 2 3; do
                start_driver 2 || return 1
                latency_round "$round" || { stop_driver; return 1; }
                stop_driver
        done
        # shellcheck disable=SC2086  # the runs, one per word
        R[lat_p50]=$(printf '%s\n' ${R[lat_p50_runs]} | median)
        # shellcheck disable=SC2086
        R[lat_p99]=$(printf '%s\n' ${R[lat_p99_runs]} | median)
        # shellcheck disable=SC2086
        R[lat_rtt_p50]=$(printf '%s\n' ${R[lat_rtt_runs]} | median)
        # shellcheck disable=SC2086
        R[lat_p50_ratio]=$(printf '%s\n' ${R[lat_p50_ratio_runs]} | median)
        # shellcheck disable=SC2086
        R[lat_p99_ratio]=$(printf '%s\n' ${R[lat_p99_ratio_runs]} | median)
        say "  submit→result p50 ${R[lat_p50]} µs, p99 ${R[lat_p99]} µs, raw round trip p50 ${R[lat_rtt_p50]} µs" \
                "(medians of 3 rounds; p50s ${R[lat_p50_runs]}; raw ${R[lat_rtt_runs]}; ratios ${R[lat_p50_ratio_runs]})"
}

# The same, with every poll over nng (driver.task_channel = false): what
# the task channel (docs/DESIGN.md §4) saves, in the same run.
measure_latency_nng() {
        DRIVER_EXTRA='task_channel = false;'
        start_driver 2 || { DRIVER_EXTRA=''; return 1; }
        DRIVER_EXTRA=''
        run_fg "${CLIENT_ENV[@]}" timeout 120 "$BT/bench-client" latency "$DRIVER_URL" "$TASKS_LIB" empty "" 1000 \
                >"$tmp/latency-nng.out" 2>>"$tmp/client.log" || { stop_driver; return 1; }
        stop_driver
        R[lat_nng_p50]=$(kv "$tmp/latency-nng.out" latency_us_p50)
        R[lat_nng_p99]=$(kv "$tmp/latency-nng.out" latency_us_p99)
        say "  every poll over nng: submit→result p50 ${R[lat_nng_p50]} µs, p99 ${R[lat_nng_p99]} µs"
}

# ================================================ a driver with a state_dir
# Empty-task throughput (2 executors) and one-task submit→result latency of
# a driver that journals its jobs and results (driver.state_dir, written
# before a client sees them, synced by a thread of its own: the default
# journal_sync), beside the same driver without one and with journal_sync
# "before-reply" (the loop syncs before each answer): in memory, durable,
# synced, three times over, the median of each kind's three rounds.  (A
# driver's p50 is steady within its 1,000 jobs but moves by a fifth or
# more from one driver to the next on this shared machine: 168 to 262 µs
# among four in-memory drivers of one run.  The better of two rounds was
# set by whichever outlier came.)
DURABLE_TASKS=${BENCH_DURABLE_TASKS:-200000}
measure_durable() {
        local round kind out
        for round in 1 2 3; do
                for kind in memory durable synced; do
                        DRIVER_EXTRA=''
                        [ $kind = durable ] && DRIVER_EXTRA="state_dir = \"$tmp/durable-state-$round\";"
                        [ $kind = synced ] &&
                                DRIVER_EXTRA="state_dir = \"$tmp/synced-state-$round\"; journal_sync = \"before-reply\";"
                        start_driver 2 || { DRIVER_EXTRA=''; return 1; }
                        DRIVER_EXTRA=''
                        out=$tmp/durable-tput-$kind-$round.out
                        run_fg "${CLIENT_ENV[@]}" timeout 120 "$BT/bench-client" throughput "$DRIVER_URL" "$TASKS_LIB" empty "" \
                                "$DURABLE_TASKS" >"$out" 2>>"$tmp/client.log" || { stop_driver; return 1; }
                        R[dur_tput_${kind}_runs]+="$(kv "$out" tasks_per_s) "
                        out=$tmp/durable-lat-$kind-$round.out
                        run_fg "${CLIENT_ENV[@]}" timeout 120 "$BT/bench-client" latency "$DRIVER_URL" "$TASKS_LIB" empty "" 1000 \
                                >"$out" 2>>"$tmp/client.log" || { stop_driver; return 1; }
                        R[dur_p50_${kind}_runs]+="$(kv "$out" latency_us_p50) "
                        # a driver with a state_dir keeps its application when
                        # stopped: kill-app ends it, executors and all
                        [ $kind = memory ] || "${CLIENT_ENV[@]}" "$B/sparkctl" --master "$(url $P_MASTER)" kill-app \
                                "$(sed -n 's/.*Application \(app-[0-9-]*\) .*registered with the master.*/\1/p' "$tmp/$DRIVER.log" | head -n 1)" \
                                >/dev/null 2>>"$tmp/client.log" || true
                        stop_driver
                done
        done
        for kind in memory durable synced; do
                # shellcheck disable=SC2086  # the runs, one per word
                R[dur_tput_$kind]=$(printf '%s\n' ${R[dur_tput_${kind}_runs]} | median)
                # shellcheck disable=SC2086
                R[dur_p50_$kind]=$(printf '%s\n' ${R[dur_p50_${kind}_runs]} | median)
        done
        # what "before-reply" adds: a one-task job waits for one sync (the
        # job and its result together, before the submission is answered)
        run_fg "$BT/bench-tool" fsync "$tmp" 200 >"$tmp/fsync.out" || true
        R[fsync_p50]=$(kv "$tmp/fsync.out" fdatasync_us_p50)
        say "  durable driver: ${R[dur_tput_durable]} tasks/s, p50 ${R[dur_p50_durable]} µs;" \
                "synced before each reply: ${R[dur_tput_synced]} tasks/s, p50 ${R[dur_p50_synced]} µs;" \
                "in memory: ${R[dur_tput_memory]} tasks/s, p50 ${R[dur_p50_memory]} µs"
}

# ============================================ the driver's memory, 10 M results
# One job of BENCH_MEMORY_TASKS (10,000,000) function tasks that each return
# one byte (echo of "r"), on a driver of 2 executors with result_memory_mb = 1,
# so that nearly every result goes to the spill file; the client fetches
# them all, 100,000 a page, as the throughput rows do.  The driver's peak
# RSS (VmHWM) and the job's time, submission to the last page fetched.
MEMORY_TASKS=${BENCH_MEMORY_TASKS:-10000000}
measure_driver_memory() {
        local out=$tmp/memory.out
        DRIVER_EXTRA='result_memory_mb = 1;'
        start_driver 2 || { DRIVER_EXTRA=''; return 1; }
        DRIVER_EXTRA=''
        run_fg "${CLIENT_ENV[@]}" timeout 900 "$BT/bench-client" throughput "$DRIVER_URL" "$TASKS_LIB" echo r \
                "$MEMORY_TASKS" >"$out" 2>>"$tmp/client.log" || { stop_driver; return 1; }
        read -r _ R[mem_driver_hwm_kB] <<<"$(rss_of "${DAEMON_PID[$DRIVER]}")"
        R[mem_tasks]=$MEMORY_TASKS
        R[mem_elapsed_ms]=$(kv "$out" elapsed_ms)
        stop_driver
        say "  driver memory: $MEMORY_TASKS results, peak RSS ${R[mem_driver_hwm_kB]} kB, ${R[mem_elapsed_ms]} ms"
}

# ============================================== against xargs and parallel
# What a user would run instead of command tasks on one host: the same N
# commands through `sparkctl submit --command` (the driver's E one-core
# executors), `xargs -P E` and GNU `parallel -j E`, in turn, ROUNDS times
# (alternately, so that a busy spell of the machine falls on all three),
# each wall time from the tool's start to its exit; the best of the rounds
# is each tool's figure (on a shared machine the slower ones measure the
# neighbours).  Two loads: N `true`
# (spawn and result cost alone) and `gzip -1 -c` of small files staged
# under $tmp (not /tmp: the executors' PrivateTmp= would hide them), whose
# compressed bytes are each task's output, written in task order to a file
# (xargs's and parallel's outputs go to a file too).
TOOLS_E=2
TOOLS_TRUE_N=${BENCH_TOOLS_TRUE:-10000}
TOOLS_GZIP_N=${BENCH_TOOLS_GZIP:-2000}
TOOLS_ROUNDS=${BENCH_TOOLS_ROUNDS:-2}

# stage_gzip_inputs N: N files of 64 KiB of log-like text (compressible as
# logs are), and their list in $tmp/gzip-in.list
stage_gzip_inputs() {
        local n=$1 d=$tmp/gzip-in
        mkdir -p "$d"
        awk -v bytes=$((n * 65536)) 'BEGIN {
                srand(14); total = 0
                for (i = 0; total < bytes; i++) {
                        line = sprintf("2026-12-01T18:%02d:%02d.%06d worker-%d executor %d task %d: %s %.4f ms\n",
                                int(i / 60000) % 60, int(i / 1000) % 60, i % 1000000, i % 17, i % 97, i,
                                (rand() < 0.9 ? "finished" : "re-queued"), rand() * 100)
                        printf("%s", line); total += length(line)
                } }' | split -b 65536 -a 5 -d - "$d/f" || return 1
        find "$d" -type f -name 'f*' | sort | head -n "$n" >"$tmp/gzip-in.list"
        [ "$(wc -l <"$tmp/gzip-in.list")" -eq "$n" ]
}

# time_run OUT CMD...: runs CMD with its stdin as given, its stdout to OUT;
# leaves its wall time (µs) in T_US; fails if CMD does
T_US=
time_run() {
        local out=$1 t0 t1 rc=0
        shift
        t0=$(now_us)
        # as run_fg does, but with our stdin (a job's default is /dev/null)
        "$@" <&0 >"$out" 2>>"$tmp/tools.log" &
        FG_PID=$!
        wait "$FG_PID" || rc=$?
        FG_PID=
        t1=$(now_us)
        T_US=$((t1 - t0))
        return $rc
}

# in_scope CMD...: CMD in a scope of its own in a slice beside the
# executors' (spark-bench-tools.slice) of the same user manager, so that
# the kernel's CPU scheduler weighs it as it weighs the executors: on a busy
# machine a process in the root cgroup competes with every other runnable
# task one by one, a cgroup as one.  (systemd-run's own ~10 ms are in the
# figure.)
in_scope() {
        systemd-run --user --scope --quiet --collect --slice=spark-bench-tools.slice -- "$@"
}

# tools_round LOAD: one timing of each tool on LOAD (true or gzip), in turn;
# appends the times (µs) to TOOLS_T[LOAD_TOOL]
declare -A TOOLS_T=()
tools_round() {
        local load=$1 e=$TOOLS_E out=$tmp/tools-$1.out
        if [ "$load" = true ]; then
                time_run "$out" "${CLIENT_ENV[@]}" "$B/sparkctl" --driver "$DRIVER_URL" submit --name true-tasks \
                        --command true --count "$TOOLS_TRUE_N" || return 1
                TOOLS_T[true_ours]+=" $T_US"
                time_run "$out" in_scope xargs -P "$e" -n 1 true <"$tmp/true-in.list" || return 1
                TOOLS_T[true_xargs]+=" $T_US"
                time_run "$out" in_scope parallel -j "$e" true <"$tmp/true-in.list" || return 1
                TOOLS_T[true_parallel]+=" $T_US"
        else
                time_run "$out" "${CLIENT_ENV[@]}" "$B/sparkctl" --driver "$DRIVER_URL" submit --name gzip-tasks \
                        --command 'gzip -1 -c {}' --inputs "$tmp/gzip-in.list" || return 1
                TOOLS_T[gzip_ours]+=" $T_US"
                TOOLS_T[gzip_bytes]=$(stat -c %s "$out")
                time_run "$out" in_scope xargs -P "$e" -n 1 gzip -1 -c <"$tmp/gzip-in.list" || return 1
                TOOLS_T[gzip_xargs]+=" $T_US"
                time_run "$out" in_scope parallel -j "$e" gzip -1 -c <"$tmp/gzip-in.list" || return 1
                TOOLS_T[gzip_parallel]+=" $T_US"
        fi
}

measure_tools() {
        local load tool i
        command -v parallel >/dev/null || { say "  GNU parallel is not installed (apt-get install parallel)"; return 1; }
        stage_gzip_inputs "$TOOLS_GZIP_N" || { say "  cannot stage the gzip inputs"; return 1; }
        seq "$TOOLS_TRUE_N" >"$tmp/true-in.list"
        # a warm-up of each (page cache, the executors' first spawns)
        run_fg "${CLIENT_ENV[@]}" "$B/sparkctl" --driver "$DRIVER_URL" submit --command true --count 200 \
                >/dev/null 2>>"$tmp/tools.log" || { say "  the warm-up job failed"; return 1; }
        cat $(cat "$tmp/gzip-in.list") >/dev/null
        for i in $(seq "$TOOLS_ROUNDS"); do
                for load in true gzip; do
                        tools_round "$load" || { say "  $load: round $i failed"; return 1; }
                done
        done
        for load in true gzip; do
                for tool in ours xargs parallel; do
                        R[tools_${load}_${tool}_runs]=${TOOLS_T[${load}_${tool}]# }
                        R[tools_${load}_${tool}]=$(printf '%s\n' ${TOOLS_T[${load}_${tool}]} | percentile 0)
                done
                say "  $load: ours ${R[tools_${load}_ours_runs]} µs; xargs ${R[tools_${load}_xargs_runs]} µs;" \
                        "parallel ${R[tools_${load}_parallel_runs]} µs"
        done
        R[tools_gzip_out_bytes]=${TOOLS_T[gzip_bytes]:-}
        rm -rf "$tmp/gzip-in" "$tmp/tools-gzip.out"
}

# ========================================================= loss trials
# A long job keeps the executors busy while they are killed or frozen.
start_long_job() {
        "${CLIENT_ENV[@]}" "$B/sparkctl" --driver "$DRIVER_URL" submit --name long --function "$TASKS_LIB:sleep_ms" --count 200000 \
                --arg 20 >/dev/null 2>>"$tmp/long-job.log" &
        SUBMIT_PID=$!
        sleep 0.5
}
stop_long_job() {
        [ -n "${SUBMIT_PID:-}" ] && stop_pid "$SUBMIT_PID" TERM
        SUBMIT_PID=
}

# wait_new_executor AFTER_ID: waits until an executor with a larger id has
# registered (the master's replacement); leaves its id in FOUND.
wait_new_executor() {
        for _ in $(seq 300); do
                FOUND=$(latest_executor)
                [ -n "$FOUND" ] && [ "$FOUND" -gt "$1" ] && return 0
                sleep 0.02
        done
        return 1
}

KILL_MS=() REQUEUED=()
measure_kill() {
        local trial id pid t_kill t_lost line
        start_long_job
        id=$(latest_executor)
        for trial in $(seq "$KILL_TRIALS"); do
                sleep 0.3 # let it take tasks
                pid=$(executor_pid "$id")
                [ -n "$pid" ] || { say "  no pid for executor $id"; return 1; }
                # one process kills and waits (bench-tool.c, killwait): the
                # shell starts nothing while the driver reacts
                read -r t_kill t_lost < <("$BT/bench-tool" killwait 9 "$pid" "$tmp/$DRIVER.log" \
                        "Executor $id on [^ ]+ lost: " 10) || true
                [ -n "$t_lost" ] || { say "  executor $id: no loss logged"; return 1; }
                line=$(awk -v t="$t_lost" -v re="Executor $id on [^ ]+ lost: " '$1 == t && $0 ~ re { print; exit }' \
                        "$tmp/$DRIVER.log")
                KILL_MS+=("$(ms_between "$t_kill" "$t_lost" 3)")
                REQUEUED+=("$(sed -n 's/.*; \([0-9]*\) running tasks re-queued.*/\1/p' <<<"$line")")
                R[kill_reason_$trial]=$(sed -n 's/.* lost: \(.*\); [0-9]* running tasks.*/\1/p' <<<"$line")
                wait_new_executor "$id" || { say "  no replacement executor"; return 1; }
                id=$FOUND
        done
        stop_long_job
        R[kill_p50]=$(printf '%s\n' "${KILL_MS[@]}" | percentile 50)
        R[kill_p99]=$(printf '%s\n' "${KILL_MS[@]}" | percentile 99)
        R[kill_requeued]="${REQUEUED[*]}"
        say "  SIGKILL → re-queued: p50 ${R[kill_p50]} ms, p99 ${R[kill_p99]} ms over ${#KILL_MS[@]} trials"
}

FREEZE_MS=()
measure_freeze() {
        local trial id pid t_stop t_lost
        start_long_job
        id=$(latest_executor)
        for trial in 1 2 3; do
                sleep 0.3
                pid=$(executor_pid "$id")
                t_stop=$("$BT/bench-tool" kill 19 "$pid") || return 1
                wait_log "$tmp/$DRIVER.log" "Executor $id on [^ ]+ lost: " "$t_stop" 20 ||
                        { kill -CONT "$pid" 2>/dev/null; say "  frozen executor $id never declared lost"; return 1; }
                t_lost=$FOUND
                FREEZE_MS+=("$(ms_between "$t_stop" "$t_lost" 1)")
                R[freeze_reason_$trial]=$(awk -v t="$t_lost" '$1 == t && / lost: / { sub(/.* lost: /, ""); print; exit }' \
                        "$tmp/$DRIVER.log")
                kill -CONT "$pid" 2>/dev/null || true
                wait_new_executor "$id" || { say "  no replacement executor"; return 1; }
                id=$FOUND
        done
        stop_long_job
        R[freeze_p50]=$(printf '%s\n' "${FREEZE_MS[@]}" | median)
        R[freeze_max]=$(printf '%s\n' "${FREEZE_MS[@]}" | percentile 100)
        say "  SIGSTOP → lost: ${FREEZE_MS[*]} ms (timeout $HB_TIMEOUT_MS ms)"
}

WORKER_LOSS_MS=()
measure_worker_loss() {
        local trial wid pid t_kill t_lost
        # worker1's own id, from its start-up line ("Worker ID: N cores, …")
        wid=$(awk '/ Worker worker-[^ ]+: [0-9]+ cores/ { for (i = 1; i <= NF; i++) if ($i == "Worker") { id = $(i + 1); sub(/:$/, "", id); print id; exit } }' \
                "$tmp/worker1.log")
        [ -n "$wid" ] || { say "  cannot tell worker1's id"; return 1; }
        for trial in 1 2 3; do
                pid=${DAEMON_PID[worker1]}
                t_kill=$("$BT/bench-tool" kill 9 "$pid") || return 1
                wait "$pid" 2>/dev/null || true
                wait_log "$tmp/master.log" "Worker $wid lost: " "$t_kill" 30 ||
                        { say "  the master never declared $wid lost"; return 1; }
                t_lost=$FOUND
                WORKER_LOSS_MS+=("$(ms_between "$t_kill" "$t_lost" 1)")
                start_daemon worker1 "$B/spark-worker" --config "$tmp/worker1.conf"
                wait_log "$tmp/master.log" "Worker $wid (re-)?registered" "$t_lost" 20 ||
                        { say "  worker1 did not register again"; return 1; }
                sleep 0.7 # a heartbeat or two: the next kill starts from a live worker
        done
        R[worker_loss_p50]=$(printf '%s\n' "${WORKER_LOSS_MS[@]}" | median)
        R[worker_loss_max]=$(printf '%s\n' "${WORKER_LOSS_MS[@]}" | percentile 100)
        say "  worker SIGKILL → lost: ${WORKER_LOSS_MS[*]} ms (timeout $WORKER_TIMEOUT_MS ms)"
}

# Drain: while both executors run tasks of DRAIN_TASK_MS, `sparkctl drain`
# of a worker → the master's "Worker W drained" line (its executors finished
# their tasks, were released by the driver and stopped); then undrain.  The
# goal is the longest running task + 1 s.
DRAIN_TASK_MS=500
DRAIN_MS=()
measure_drain() {
        local trial wid w t0 master_url
        master_url=$(url $P_MASTER)
        # worker 1, then 2, then 1: each time the one that holds executors
        # (a drain moves the app's executors to the other)
        for trial in 1 2 3; do
                w=worker$((2 - trial % 2))
                wid=$(awk '/ Worker worker-[^ ]+: [0-9]+ cores/ { for (i = 1; i <= NF; i++) if ($i == "Worker") { id = $(i + 1); sub(/:$/, "", id); print id; exit } }' \
                        "$tmp/$w.log")
                [ -n "$wid" ] || { say "  cannot tell $w's id"; return 1; }
                "${CLIENT_ENV[@]}" "$B/sparkctl" --driver "$DRIVER_URL" submit --name "drain-$trial" --function "$TASKS_LIB:sleep_ms" \
                        --count 2000 --arg "$DRAIN_TASK_MS" >/dev/null 2>>"$tmp/drain-job.log" &
                SUBMIT_PID=$!
                sleep 1.2 # both executors are in the middle of a task
                t0=$("$BT/bench-tool" now)
                "${CLIENT_ENV[@]}" "$B/sparkctl" --master "$master_url" drain "$wid" >>"$tmp/drain.log" 2>&1 ||
                        { say "  sparkctl drain failed"; stop_long_job; return 1; }
                wait_log "$tmp/master.log" "Worker $wid drained" "$t0" 30 ||
                        { say "  worker $wid never drained"; stop_long_job; return 1; }
                DRAIN_MS+=("$(ms_between "$t0" "$FOUND" 1)")
                "${CLIENT_ENV[@]}" "$B/sparkctl" --master "$master_url" undrain "$wid" >>"$tmp/drain.log" 2>&1 ||
                        { say "  sparkctl undrain failed"; stop_long_job; return 1; }
                stop_long_job
                # the app gets its executor back on worker 1 before the next trial
                sleep 1.5
        done
        R[drain_p50]=$(printf '%s\n' "${DRAIN_MS[@]}" | median)
        R[drain_max]=$(printf '%s\n' "${DRAIN_MS[@]}" | percentile 100)
        say "  drain → drained: ${DRAIN_MS[*]} ms (tasks of $DRAIN_TASK_MS ms)"
}

# The driver's /api/v1/jobs while a large job runs: a job of
# JOBS_API_TASKS empty tasks on 8 executors, then the same job with
# bench-tool polling /api/v1/jobs every 100 ms, as a dashboard would: the
# poll's response time, and the job's throughput beside the unpolled one.
JOBS_API_TASKS=${BENCH_JOBS_API_TASKS:-1000000}
POLL_PID=
measure_jobs_api() {
        local hp=$((base + 90)) own=0 rc=0
        say "driver /api/v1/jobs: a job of $JOBS_API_TASKS empty tasks, then the same polled every 100 ms"
        if [ -z "${DAEMON_PID[master]:-}" ]; then
                start_cluster || { say "  the cluster did not come up"; return 1; }
                own=1
        fi
        DRIVER_EXTRA="http_listen = \"127.0.0.1:$hp\";" start_driver 8 || return 1
        run_fg "${CLIENT_ENV[@]}" timeout 600 "$BT/bench-client" throughput "$DRIVER_URL" "$TASKS_LIB" empty "" \
                "$JOBS_API_TASKS" >"$tmp/jobsapi-plain.out" 2>>"$tmp/client.log" || { say "  the unpolled job failed"; rc=1; }
        if [ $rc = 0 ]; then
                "$BT/bench-tool" poll "127.0.0.1:$hp" /api/v1/jobs 100 >"$tmp/jobsapi-poll.out" 2>&1 &
                POLL_PID=$!
                run_fg "${CLIENT_ENV[@]}" timeout 600 "$BT/bench-client" throughput "$DRIVER_URL" "$TASKS_LIB" empty "" \
                        "$JOBS_API_TASKS" >"$tmp/jobsapi-polled.out" 2>>"$tmp/client.log" || { say "  the polled job failed"; rc=1; }
                kill -TERM "$POLL_PID" 2>/dev/null
                wait "$POLL_PID" 2>/dev/null || true
                POLL_PID=
        fi
        stop_driver
        if [ $own = 1 ]; then
                for n in worker1 worker2 master; do stop_daemon "$n"; done
        fi
        [ $rc = 0 ] || return 1
        R[jobsapi_tasks]=$JOBS_API_TASKS
        R[jobsapi_tput_plain]=$(kv "$tmp/jobsapi-plain.out" tasks_per_s)
        R[jobsapi_tput_polled]=$(kv "$tmp/jobsapi-polled.out" tasks_per_s)
        R[jobsapi_polls]=$(kv "$tmp/jobsapi-poll.out" poll_count)
        R[jobsapi_polls_failed]=$(kv "$tmp/jobsapi-poll.out" poll_failed)
        R[jobsapi_poll_bytes]=$(kv "$tmp/jobsapi-poll.out" poll_bytes)
        R[jobsapi_poll_ms_p50]=$(awk -v u="$(kv "$tmp/jobsapi-poll.out" poll_us_p50)" 'BEGIN { printf "%.2f", u / 1000 }')
        R[jobsapi_poll_ms_p99]=$(awk -v u="$(kv "$tmp/jobsapi-poll.out" poll_us_p99)" 'BEGIN { printf "%.2f", u / 1000 }')
        say "  /api/v1/jobs p50 ${R[jobsapi_poll_ms_p50]} ms, p99 ${R[jobsapi_poll_ms_p99]} ms (${R[jobsapi_polls]} polls);" \
            "throughput ${R[jobsapi_tput_polled]} tasks/s polled, ${R[jobsapi_tput_plain]} unpolled"
}

# ============================================================ the run
run_cluster_phases() {
        local e rss
        say "cluster: a master, 2 workers (4 cores each), a driver per executor count"
        start_cluster || { say "the cluster did not come up"; return 1; }
        for e in 2 1 4 8; do
                start_driver "$e" || return 1
                say "driver with $e executors up"
                if [ "$e" = 2 ]; then
                        read -r R[rss_master_rest] _ <<<"$(rss_of "${DAEMON_PID[master]}")"
                        read -r R[rss_worker_rest] _ <<<"$(rss_of "${DAEMON_PID[worker1]}")"
                        read -r R[rss_driver_rest] _ <<<"$(rss_of "${DAEMON_PID[$DRIVER]}")"
                        R[executor_pid]=$(executor_pid "$(latest_executor)")
                        read -r R[rss_executor_rest] _ <<<"$(rss_of "${R[executor_pid]}")"
                fi
                if ! skip throughput; then
                        measure_throughput "$e" || note "throughput with $e executors failed"
                fi
                if [ "$e" = 2 ]; then
                        skip latency || measure_latency || note "the latency measurement failed"
                        skip tools || measure_tools || note "the rows against xargs and parallel failed"
                        read -r _ R[rss_driver_load] <<<"$(rss_of "${DAEMON_PID[$DRIVER]}")"
                        read -r _ R[rss_executor_load] <<<"$(rss_of "${R[executor_pid]}")"
                        skip loss || measure_kill || { stop_long_job; note "the SIGKILL trials failed"; }
                        skip freeze || measure_freeze || { stop_long_job; note "the SIGSTOP trials failed"; }
                        skip drain || measure_drain || note "the drain trials failed"
                fi
                stop_driver
        done
        skip latency || measure_latency_rounds || note "the latency rounds failed"
        skip latency || measure_latency_nng || note "the latency measurement over nng failed"
        skip durable || measure_durable || note "the durable driver's rows failed"
        skip memory || measure_driver_memory || note "the driver memory row failed"
        # more start-ups for the app registered → first executor figures:
        # each is one or two grace periods (unit-baseline.c), so a median
        # needs a good number of them.  Apps of one executor (the row: one
        # unit, as its baseline starts one) and of two (an info row beside
        # two raw units at once) in turn.  The baselines, raw starts with
        # the executor's full property set, are measured between them too,
        # 5 single starts and 3 pairs before every 5 of ours: the 20 starts
        # of the baselines phase, all at one moment, gave p50s from 46 to 64
        # ms among one day's runs, while ours, taken across the whole run,
        # stayed within 55 to 61 ms (67 to 72 over TLS).  Each figure is
        # the median of all its samples (40 single starts, 32 pairs).
        local i
        for i in $(seq 20); do
                if [ $((i % 5)) = 1 ] && ! skip baselines; then
                        run_fg "$BT/unit-baseline" "$BT/stamp" 5 250 spark-bench.slice "$tmp/unit-work" \
                                >"$tmp/unit-exec-$i.out" || return 1
                        R[unit_exec_samples]+=" $(unit_samples "$tmp/unit-exec-$i.out")"
                        UNIT_BASELINE_AT_ONCE=2 run_fg "$BT/unit-baseline" "$BT/stamp" 3 250 spark-bench.slice \
                                "$tmp/unit-work2" >"$tmp/unit-exec2-$i.out" || return 1
                        R[unit_exec2_samples]+=" $(unit_samples "$tmp/unit-exec2-$i.out" unit_first_of_2_us)"
                fi
                # apps of one executor and of two in turn
                start_driver $((2 - i % 2)) || return 1
                stop_driver
        done
        if ! skip baselines; then
                R[unit_exec_p50_first]=${R[unit_exec_p50]}
                # shellcheck disable=SC2086  # the samples, one per word
                R[unit_exec_p50]=$(printf '%s\n' ${R[unit_exec_samples]} | median)
                # shellcheck disable=SC2086
                R[unit_exec_n]=$(printf '%s\n' ${R[unit_exec_samples]} | wc -l)
                say "  raw start, full property set, after a pause: p50 ${R[unit_exec_p50]} µs of ${R[unit_exec_n]}" \
                        "(the baselines phase's 20: ${R[unit_exec_p50_first]} µs)"
                # shellcheck disable=SC2086
                R[unit_exec2_p50]=$(printf '%s\n' ${R[unit_exec2_samples]} | median)
                # shellcheck disable=SC2086
                R[unit_exec2_n]=$(printf '%s\n' ${R[unit_exec2_samples]} | wc -l)
        fi
        R[startup_p50]=$(printf '%s\n' "${STARTUP_MS[@]}" | median)
        R[startup_max]=$(printf '%s\n' "${STARTUP_MS[@]}" | percentile 100)
        R[startup_samples]="${STARTUP_MS[*]}"
        R[startup2_p50]=$(printf '%s\n' "${STARTUP2_MS[@]}" | median)
        R[startup2_samples]="${STARTUP2_MS[*]}"
        local k
        for k in 1 2 3 4 5 6; do
                R[startup_step$k]=$(printf '%s\n' "${STARTUP_STEPS[@]}" | awk -v k="$k" 'NF { print $k }' | median)
        done
        say "  app registered → first executor: ${STARTUP_MS[*]} ms (apps of one);" \
                "${STARTUP2_MS[*]} ms (apps of two)"
        if ! skip elastic; then
                measure_elastic || note "the elastic trials failed"
                stop_driver
        fi
        read -r _ R[rss_master_load] <<<"$(rss_of "${DAEMON_PID[master]}")"
        read -r _ R[rss_worker_load] <<<"$(rss_of "${DAEMON_PID[worker1]}")"
        skip worker || measure_worker_loss || note "the worker-loss trials failed"
        for n in worker1 worker2 master; do stop_daemon "$n"; done
}

# Fair share: a master with scheduling "fair" and preemption_timeout_ms
# FAIR_TIMEOUT_MS, two workers of 4 cores (plain tcp, ports of their own);
# application A (no cap) takes all 8 executors and runs tasks of 50 ms;
# then B (no cap, same weight) registers.  The time from the master's
# "Application … (bench-fair-b) registered" to B's 4th executor registered
# with its driver: its DRF share, 4 of 8, reached through preemption.
FAIR_TIMEOUT_MS=${BENCH_FAIR_TIMEOUT_MS:-1000}
measure_fair() {
        local fb x dp t_app t_share submit rc=0
        fb=$(pick_port_base) || { say "no free block of ports"; return 1; }
        say "fair share: 2 workers × 4 cores, preemption_timeout_ms $FAIR_TIMEOUT_MS; a second application's share"
        cat >"$tmp/fair.conf" <<EOF
cluster: { master = "tcp://127.0.0.1:$fb"; master_events = "tcp://127.0.0.1:$((fb + 1))"; };
master: { listen = "tcp://127.0.0.1:$fb"; events_listen = "tcp://127.0.0.1:$((fb + 1))"; http_listen = "";
          state_dir = "$tmp/fair-state"; scheduling = "fair"; preemption_timeout_ms = $FAIR_TIMEOUT_MS; };
EOF
        for x in 1 2; do
                cat >"$tmp/fair-worker$x.conf" <<EOF
@include "fair.conf"
worker: { listen = "tcp://127.0.0.1:$((fb + 2 * x + 2))"; events_listen = "tcp://127.0.0.1:$((fb + 2 * x + 3))";
          http_listen = ""; cores = 4; memory_mb = 4096; systemd_bus = "user"; work_dir = "$tmp/fair-work$x";
          heartbeat_ms = 500; executor_binary = "$B/spark-executor"; executor_slice = "spark-bench.slice"; };
EOF
        done
        for x in a b; do
                dp=$((fb + 10))
                [ $x = b ] && dp=$((fb + 12))
                cat >"$tmp/fair-$x.conf" <<EOF
@include "fair.conf"
driver: { app_name = "bench-fair-$x"; listen = "tcp://127.0.0.1:$dp"; events_listen = "tcp://127.0.0.1:$((dp + 1))";
          http_listen = ""; cores_per_executor = 1; executor_memory_mb = 256; locality_wait_ms = 0; };
EOF
        done
        start_daemon fair-master "$B/spark-master" --config "$tmp/fair.conf"
        start_daemon fair-worker1 "$B/spark-worker" --config "$tmp/fair-worker1.conf"
        start_daemon fair-worker2 "$B/spark-worker" --config "$tmp/fair-worker2.conf"
        for _ in $(seq 400); do
                [ "$(log_count "$tmp/fair-master.log" "Worker .* registered")" -ge 2 ] && break
                sleep 0.05
        done
        start_daemon fair-a "$B/spark-driver" --config "$tmp/fair-a.conf"
        for _ in $(seq 600); do
                [ "$(log_count "$tmp/fair-a.log" "Executor [0-9]+ registered")" -ge 8 ] && break
                sleep 0.05
        done
        "$B/sparkctl" --driver "tcp://127.0.0.1:$((fb + 10))" submit --name long --function "$TASKS_LIB:sleep_ms" \
                --count 200000 --arg 50 >/dev/null 2>>"$tmp/fair-job.log" &
        submit=$!
        sleep 0.5
        start_daemon fair-b "$B/spark-driver" --config "$tmp/fair-b.conf"
        if wait_log "$tmp/fair-master.log" "Application .* \\(bench-fair-b\\) registered" 0 20; then
                t_app=$FOUND
                for _ in $(seq 600); do
                        [ "$(log_count "$tmp/fair-b.log" "Executor [0-9]+ registered")" -ge 4 ] && break
                        sleep 0.05
                done
                t_share=$(awk '$0 ~ /Executor [0-9]+ registered/ { if (++n == 4) { print $1; exit } }' "$tmp/fair-b.log")
                if [ -n "$t_share" ]; then
                        R[fair_share_ms]=$(ms_between "$t_app" "$t_share" 0)
                        R[fair_preempted]=$(log_count "$tmp/fair-master.log" "taken back for")
                        say "  second application at its share (4 of 8) after ${R[fair_share_ms]} ms; ${R[fair_preempted]} executors taken back"
                else
                        say "  the second application never reached 4 executors"
                        rc=1
                fi
        else
                say "  the second application did not register"
                rc=1
        fi
        kill -TERM "$submit" 2>/dev/null
        wait "$submit" 2>/dev/null
        for x in fair-b fair-a fair-worker1 fair-worker2 fair-master; do stop_daemon "$x"; done
        return $rc
}

# run_scale [fair]: the master at scale; "fair": with master.scheduling
# "fair", its figures under R[scale_fair_*], beside FIFO's R[scale_*].
run_scale() {
        local sbase master_url events_url rc=0 sched=fifo p=scale
        if [ "${1:-}" = fair ]; then
                sched=fair p=scale_fair
        fi
        say "master scale ($sched): $WORKERS workers × $WORKER_CORES cores, $APPS apps × $APP_EXECUTORS executors, then $SMALL_APPS apps × 1"
        sbase=$(pick_port_base) || { say "no free block of ports"; return 1; }
        master_url=$(url "$sbase")
        events_url=$(url $((sbase + 1)))
        scale_master_conf "$tmp/scale.conf" "$master_url" "$events_url" "$tmp/${p}-state" $((sbase + 2)) \
                "scheduling = \"$sched\";"
        # the master holds an nng socket (and more: see the fds figure) per
        # worker: give it what units/spark-master.service gives it
        ulimit -Hn 65536 2>/dev/null || true
        ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
        R[${p}_fd_limit]=$(ulimit -n)
        "$B/spark-master" --config "$tmp/scale.conf" >"$tmp/scale-master.log" 2>&1 &
        DAEMON_PID[scale-master]=$!
        ALL_PIDS+=("$!")
        sleep 0.3
        # the simulated workers' endpoints: 64 listeners, ports sbase+10 ..
        # FIFO's pass then registers LATE_WORKERS more, each several times,
        # half of those registrations while it scrapes /metrics every 100 ms
        # (bench/master-load.c)
        # and scrapes the master at rest BENCH_SCRAPES times, its workers' endpoints still up
        local late=()
        [ $sched = fair ] || late=("127.0.0.1:$((sbase + 2))" "$LATE_WORKERS" "${BENCH_SCRAPES:-100}")
        # each late registration, scrape and small app, timed, in the kept logs: to
        # line a slow one up with the master's log or a profile
        MASTER_LOAD_TRACE=$tmp/${p}-trace \
        timeout 420 "$BT/master-load" "$master_url" "$events_url" 127.0.0.1 $((sbase + 10)) 64 \
                "${DAEMON_PID[scale-master]}" "$WORKERS" "$WORKER_CORES" "$APPS" "$APP_EXECUTORS" "$SMALL_APPS" \
                "${late[@]}" >"$tmp/scale.out" 2>"$tmp/scale.log" &
        LOAD_PID=$!
        wait "$LOAD_PID" || rc=$?
        LOAD_PID=
        [ $rc = 0 ] || note "master-load exited with $rc: $(tail -n 3 "$tmp/scale.log" | tr '\n' ' ')"
        R[${p}_threads]=$(awk '/^Threads:/ { print $2 }' "/proc/${DAEMON_PID[scale-master]}/status" 2>/dev/null || true)
        stop_daemon scale-master
        while read -r k v; do R[${p}_$k]=$v; done <"$tmp/scale.out"
        if [ -n "${R[${p}_idle_scrapes]:-}" ]; then
                R[scale_scrapes]=${R[${p}_idle_scrapes]}
                R[scale_scrape_bytes]=${R[${p}_idle_scrape_bytes]:-}
                R[scale_scrape_ms_p50]=$(awk -v u="${R[${p}_idle_scrape_us_p50]:-0}" 'BEGIN { printf "%.3f", u / 1000 }')
                R[scale_scrape_ms_p99]=$(awk -v u="${R[${p}_idle_scrape_us_p99]:-0}" 'BEGIN { printf "%.3f", u / 1000 }')
                say "  /metrics scrape p50 ${R[scale_scrape_ms_p50]} ms, p99 ${R[scale_scrape_ms_p99]} ms, ${R[scale_scrape_bytes]} bytes"
        fi
        R[${p}_master_warnings]=$(grep -c ': warning: ' "$tmp/scale-master.log" || true)
        [ "${R[${p}_launches_missing]:-0}" = 0 ] ||
                note "master scale: ${R[${p}_launches_missing]} LaunchExecutor calls never reached their worker (the master had ${R[${p}_master_apps_fds]:-?} fds open, limit ${R[${p}_fd_limit]}); the master said: $(grep -m 1 ': warning: ' "$tmp/scale-master.log" | cut -c1-160)"
        local placed=$(( ${R[${p}_apps]:-0} * APP_EXECUTORS ))
        [ "${R[${p}_executor_added_seen]:-0}" -ge "$placed" ] ||
                note "master scale: a subscriber to the master's events learnt of ${R[${p}_executor_added_seen]:-0} of $placed executors placed (${R[${p}_executor_added_by_resync]:-0} of them by resync), even with its snapshots"
        say "  register p99 ${R[${p}_register_us_p99]:-n/a} µs, one-executor app placed p99" \
            "${R[${p}_small_place_us_p99]:-n/a} µs, RSS ${R[${p}_master_small_hwm_kB]:-${R[${p}_master_apps_hwm_kB]:-n/a}} kB"
}

# shellcheck source=bench/failover.sh
. bench/failover.sh

# The peer's figures from peers/README.md, when it is not run here.
dask_from_readme() {
        R[dask_tput]=619 R[dask_lat_p50]=10728 R[dask_lat_p99]=16673 R[dask_loss]=14.1 R[dask_start]=1176
        R[dask_same_run]=no
}

run_dask() {
        local py=/usr/bin/python3 rc=0
        if ! "$py" -c 'import distributed' 2>/dev/null; then
                say "installing python3-distributed for the peer rows"
                run_fg bash -c 'apt-get install -y -q python3-distributed ||
                        { apt-get update -q && apt-get install -y -q python3-distributed; }' >"$tmp/apt.log" 2>&1 || true
        fi
        if ! "$py" -c 'import distributed' 2>/dev/null || [ ! -f "$PEERS/dask_bench.py" ]; then
                note "Dask not available here (python3-distributed or $PEERS/dask_bench.py missing): its rows are the figures of peers/README.md, NOT measured in this run"
                dask_from_readme
                return 0
        fi
        say "Dask distributed (peers/dask_bench.py, reduced sizes)"
        "$py" "$PEERS/dask_bench.py" --tasks 5000 --latency-runs 300 --loss-trials 3 --timeout 120 \
                >"$tmp/dask.out" 2>"$tmp/dask.log" &
        DASK_PID=$!
        wait "$DASK_PID" || rc=$?
        DASK_PID=
        [ $rc = 0 ] || note "dask_bench.py exited with $rc: $(tail -n 2 "$tmp/dask.log" | tr '\n' ' ')"
        R[dask_version]=$(awk '$1 == "peer" { print $3 }' "$tmp/dask.out")
        R[dask_tput]=$(kv "$tmp/dask.out" throughput_noop_tasks_per_s)
        R[dask_lat_p50]=$(kv "$tmp/dask.out" latency_single_task_us_p50)
        R[dask_lat_p99]=$(kv "$tmp/dask.out" latency_single_task_us_p99)
        R[dask_loss]=$(kv "$tmp/dask.out" worker_loss_detect_ms)
        R[dask_start]=$(kv "$tmp/dask.out" cluster_start_ms)
        R[dask_same_run]=yes
        say "  Dask: ${R[dask_tput]} tasks/s, p50 ${R[dask_lat_p50]} µs, loss detected in ${R[dask_loss]} ms"
}

say "starting a private systemd user manager"
tests/harness/usermgr.sh start "$tmp/um" >"$tmp/usermgr.log" 2>&1 || { cat "$tmp/usermgr.log" >&2; exit 1; }
um_started=1
# shellcheck disable=SC1091
. "$tmp/um/env"

skip baselines || run_baselines || note "a baseline failed"
if ! skip cluster; then
        run_cluster_phases || note "the cluster phases stopped early"
fi
stop_driver || true
skip jobs-api || measure_jobs_api || note "the driver /api/v1/jobs phase failed"
skip scale || run_scale || note "the master scale phase failed"
if [ "$TLS" = 1 ]; then
        skip failover || note "BENCH_TLS=1: the master failover row is measured in the plain run only"
else
        skip failover || run_failover || note "the master failover phase failed"
        skip scale-zk || run_scale_zk || note "the zookeeper-mode master scale phase failed"
fi
if [ -n "$ZK_STARTED" ]; then
        tests/harness/zk.sh stop "$tmp/zk" >/dev/null 2>&1 || true
        ZK_STARTED=
fi
skip scale-fair || run_scale fair || note "the master scale phase with fair share failed"
skip fair || [ "$TLS" = 1 ] || measure_fair || note "the fair-share phase failed"
skip dask || run_dask || note "the Dask phase failed"
if [ "$TLS" = 1 ]; then
        # the loss rows' baseline is the peer's detection time
        dask_from_readme
        note "BENCH_TLS=1: the master scale and Dask phases are not run over TLS; the executor SIGKILL rows compare with the peer's figure of peers/README.md"
fi
R[run_seconds]=$((SECONDS - T_START))

# shellcheck source=bench/table.sh
. bench/table.sh
build_table
failed=0
