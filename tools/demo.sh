#!/usr/bin/env bash
# The demo: a local cluster — a master, two workers and a driver — on your
# own systemd user manager (or, as root on a machine without systemd as PID 1,
# on a private one like the tests use), runs SparkPi with 100 tasks, prints
# the estimate of π and a summary, then stops everything.
#
#   tools/demo.sh [TASKS [DARTS_PER_TASK]]
#
# It prints the web UI's URL; SPARK_DEMO_HOLD=SECONDS keeps the cluster up that
# long after SparkPi, to look at it.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
tasks=${1:-100}
darts=${2:-1000000}

tools/deps.sh build
make -s all >/dev/null

# Not under /tmp: executors run with PrivateTmp= and must see their work
# dirs, task libraries and the driver's ipc:// socket.
mkdir -p "${SPARK_TEST_ROOT:=/var/lib/spark-test}"
tmp=$(mktemp -d "$SPARK_TEST_ROOT/demo.XXXXXX")
# shellcheck source=tests/harness/build-dir.sh
. tests/harness/build-dir.sh
# the build itself, or a copy in $tmp when it lies under /tmp
B=$(SPARK_TEST_ROOT=$tmp usable_build_dir "$top/build") || { rm -rf "$tmp"; exit 1; }
pids=()
private_manager=

cleanup() {
        local rc=$?
        trap - EXIT INT TERM
        # the driver first: it unregisters the app, so its executor units go
        for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
        for pid in "${pids[@]}"; do
                for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
                kill -KILL "$pid" 2>/dev/null || true
        done
        if [ -n "${app_id:-}" ]; then
                systemctl --user stop "spark-executor-$app_id-*" 2>/dev/null || true
        fi
        if [ -n "$private_manager" ]; then
                tests/harness/usermgr.sh stop "$tmp/um" >/dev/null 2>&1 || true
        fi
        if [ $rc -ne 0 ]; then
                echo "demo failed; the daemons' last words:" >&2
                tail -n 5 "$tmp"/*.log >&2 2>/dev/null || true
        fi
        rm -rf "$tmp"
        exit $rc
}
trap cleanup EXIT INT TERM

# Which systemd user manager: the session's, else a private one (root only).
if [ "$(id -u)" != 0 ] && systemctl --user show -p SystemState --value 2>/dev/null | grep -Eq 'running|degraded'; then
        echo "Using your systemd user manager."
elif [ "$(id -u)" = 0 ]; then
        echo "Starting a private systemd user manager (no systemd session here)."
        tests/harness/usermgr.sh start "$tmp/um" >"$tmp/um.log" 2>&1 || { cat "$tmp/um.log" >&2; exit 1; }
        private_manager=1
        # shellcheck disable=SC1091
        . "$tmp/um/env"
else
        echo "No systemd user manager answers (systemctl --user); run this in a desktop session, or as root." >&2
        exit 1
fi

cat >"$tmp/cluster.conf" <<EOF
cluster: { master = "ipc://$tmp/master.sock"; master_events = "ipc://$tmp/master-events.sock"; };
master: { listen = "ipc://$tmp/master.sock"; events_listen = "ipc://$tmp/master-events.sock";
          state_dir = "$tmp/state"; worker_timeout_ms = 5000; };
driver: { app_name = "sparkpi-demo"; listen = "ipc://$tmp/driver.sock"; events_listen = "ipc://$tmp/driver-events.sock";
          cores_per_executor = 1; executor_memory_mb = 256; };
EOF
for i in 1 2; do
        cat >"$tmp/worker$i.conf" <<EOF
@include "cluster.conf"
worker: { listen = "ipc://$tmp/worker$i.sock"; events_listen = "ipc://$tmp/worker$i-events.sock";
          cores = 2; memory_mb = 1024; systemd_bus = "user"; work_dir = "$tmp/work$i";
          executor_binary = "$B/spark-executor"; executor_slice = "spark-demo.slice"; };
EOF
done

start() {
        local name=$1
        shift
        "$@" >"$tmp/$name.log" 2>&1 &
        pids=("$!" "${pids[@]}")
}
sparkctl() { "$B/sparkctl" --master "ipc://$tmp/master.sock" --driver "ipc://$tmp/driver.sock" "$@"; }

# wait_for SECONDS WHAT CMD...: poll until CMD succeeds.
wait_for() {
        local deadline=$((SECONDS + $1)) what=$2
        shift 2
        until "$@" >/dev/null 2>&1; do
                [ $SECONDS -lt $deadline ] || { echo "timed out waiting for $what" >&2; return 1; }
                sleep 0.1
        done
}
running_executors() { sparkctl status | grep -cE '^app-[0-9]+-[0-9]+/[0-9]+ +[^ ]+ +[^ ]+ +running' || true; }
all_executors_running() { [ "$(running_executors)" -ge 4 ]; }

t0=$(date +%s.%N)
start master "$B/spark-master" --config "$tmp/cluster.conf"
start worker1 "$B/spark-worker" --config "$tmp/worker1.conf"
start worker2 "$B/spark-worker" --config "$tmp/worker2.conf"
start driver "$B/spark-driver" --config "$tmp/cluster.conf"
wait_for 30 "four executors" all_executors_running
t1=$(date +%s.%N)
app_id=$(sparkctl status --json | grep -o '"app-[0-9]*-[0-9]*"' | head -n 1 | tr -d '"')

echo "Cluster up in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s:"
sparkctl status
# each daemon logs where its web UI and /metrics are (a busy default port
# moves on to the next free one)
ui_url() { sed -n 's/.*Web UI and metrics on \(http[^ ]*\).*/\1/p' "$tmp/$1.log" | head -n 1; }
echo
echo "Web UI: $(ui_url master)  (the driver's: $(ui_url driver); metrics at /metrics, JSON at /api/v1/)"
echo
echo "Running SparkPi: $tasks tasks of $darts darts each..."
t2=$(date +%s.%N)
SPARKPI_LIB=$B/examples/sparkpi.so SPARKCTL="$B/sparkctl --driver ipc://$tmp/driver.sock" \
        examples/sparkpi.sh "$tasks" "$darts"
t3=$(date +%s.%N)

awk -v a="$t2" -v b="$t3" -v n="$tasks" -v e="$(running_executors)" -v app="$app_id" 'BEGIN {
        printf "%d tasks on %d executors of %s in %.2f s (%.0f tasks/s)\n", n, e, app, b - a, n / (b - a) }'
echo "Executor units (journalctl -u 'spark-executor-*' shows their output):"
systemctl --user list-units --no-legend --plain "spark-executor-$app_id-*" | awk '{ print "  " $1, $3, $4 }'
if [ "${SPARK_DEMO_HOLD:-0}" -gt 0 ]; then
        echo "Keeping the cluster up for $SPARK_DEMO_HOLD s: open $(ui_url master)"
        sleep "$SPARK_DEMO_HOLD"
fi
echo "Stopping the cluster."
