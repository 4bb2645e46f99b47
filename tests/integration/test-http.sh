#!/usr/bin/env bash
# The daemons' HTTP servers against a real cluster (docs/observability.md):
# /metrics of master, worker and driver pass `promtool check metrics` with no
# lint warning and count what a job did; /api/v1/ is the JSON of sparkctl's
# --json; the master lists each worker's and the driver's UI address; the UI
# files are served; unknown paths are 404; and oversized, malformed and slow
# requests neither stall the loop nor grow the master's memory.
# shellcheck source=tests/harness/lib.sh
. "$(dirname "$0")/../harness/lib.sh"
# shellcheck source=tests/harness/obs.sh
. "$(dirname "$0")/../harness/obs.sh"

obs_cluster_start 2
check "both executors run" wait_until 30 obs_executors_running 2

out=$("$SPARKCTL" submit --name counted --command 'echo task {#}' --count 40 2>"$T/stderr")
check_eq "a job of 40 tasks succeeds" "40" "$(grep -c '^task ' <<<"$out")"

# --- /metrics ---------------------------------------------------------------------
if command -v promtool >/dev/null; then
        for d in master:$MASTER_HTTP worker1:${WORKER_HTTP[1]} worker2:${WORKER_HTTP[2]} driver:$DRIVER_HTTP; do
                curl -fsS "${d#*:}/metrics" >"$T/${d%%:*}.metrics"
                lint=$(promtool check metrics <"$T/${d%%:*}.metrics" 2>&1)
                rc=$?
                check_eq "${d%%:*}: promtool check metrics passes" "0" "$rc"
                check_eq "${d%%:*}: promtool has no lint warning" "" "$lint"
        done
else
        echo "# promtool is not installed: the exposition is not linted"
fi
check_eq "master: 2 alive workers" "2" "$(obs_metric "$MASTER_HTTP" 'spark_workers{state="alive"}')"
check_eq "master: 1 running application" "1" "$(obs_metric "$MASTER_HTTP" 'spark_applications{state="running"}')"
check_eq "master: 2 running executors" "2" "$(obs_metric "$MASTER_HTTP" 'spark_executors{state="running"}')"
check_eq "master: 4 cores used" "4" "$(obs_metric "$MASTER_HTTP" 'spark_cores{state="used"}')"
check_eq "master: 2 launches" "2" "$(obs_metric "$MASTER_HTTP" 'spark_executor_launches_total')"
check_eq "master: 2 executor starts timed" "2" "$(obs_metric "$MASTER_HTTP" 'spark_executor_start_seconds_count')"
check_match "master: RegisterWorker requests counted" '^[0-9]+$' \
        "$(obs_metric "$MASTER_HTTP" 'spark_rpc_requests_total{server="master",type="register_worker"}')"
check_eq "driver: 40 tasks submitted" "40" "$(obs_metric "$DRIVER_HTTP" 'spark_tasks_submitted_total')"
check_eq "driver: 40 tasks succeeded" "40" "$(obs_metric "$DRIVER_HTTP" 'spark_tasks_succeeded_total')"
check_eq "driver: 40 task durations" "40" "$(obs_metric "$DRIVER_HTTP" 'spark_task_duration_seconds_count')"
check_eq "driver: one job succeeded" "1" "$(obs_metric "$DRIVER_HTTP" 'spark_jobs_ended_total{state="succeeded"}')"
check_eq "worker 1: one running executor" "1" \
        "$(obs_metric "${WORKER_HTTP[1]}" 'spark_worker_executors{state="running"}')"
check "worker 1: its executor's memory, from systemd" \
        wait_until 15 sh -c "curl -fsS '${WORKER_HTTP[1]}/metrics' | grep -Eq '^spark_executor_memory_bytes\\{app_id=\"app-[0-9-]+\",executor_id=\"[0-9]+\"\\} [1-9][0-9]*\$'"
unit=$(curl -fsS "${WORKER_HTTP[1]}/api/v1/status" | jq -r '.executors[0].unit')
if [ "$(systemctl --user show -p CPUUsageNSec --value "$unit")" = "[not set]" ]; then
        # the manager has no cpuacct controller: systemd itself has no figure
        echo "# systemd reports no CPUUsageNSec for $unit here: the CPU figure is not checked"
        check_fails "worker 1: no CPU figure where systemd has none" \
                sh -c "curl -fsS '${WORKER_HTTP[1]}/metrics' | grep -q '^spark_executor_cpu_seconds_total{'"
else
        check "worker 1: its executor's CPU time, from systemd" \
                wait_until 15 sh -c "curl -fsS '${WORKER_HTTP[1]}/metrics' | grep -Eq '^spark_executor_cpu_seconds_total\\{app_id=\"app-[0-9-]+\",executor_id=\"[0-9]+\"\\} [0-9.e+-]+\$'"
fi

# --- /api/v1/: sparkctl's JSON ------------------------------------------------------
norm_status='del(.workers[].last_heartbeat_ms_ago) | .workers |= sort_by(.worker_id)'
check_eq "master /api/v1/status is sparkctl status --json" \
        "$("$SPARKCTL" status --json | jq -S "$norm_status")" \
        "$(curl -fsS "$MASTER_HTTP/api/v1/status" | jq -S "$norm_status")"
check_eq "master /api/v1/workers lists the workers" "2" "$(curl -fsS "$MASTER_HTTP/api/v1/workers" | jq '.workers | length')"
check_eq "master /api/v1/applications lists the app" "observed" \
        "$(curl -fsS "$MASTER_HTTP/api/v1/applications" | jq -r '.apps[0].name')"
check_eq "master /api/v1/executors lists the executors" "2" \
        "$(curl -fsS "$MASTER_HTTP/api/v1/executors" | jq '.executors | length')"
check_eq "the master links each worker's UI" "$(printf '%s\n' "${WORKER_HTTP[@]}" | LC_ALL=C sort | paste -sd ' ')" \
        "$(curl -fsS "$MASTER_HTTP/api/v1/workers" | jq -r '[.workers[].ui_url] | sort | join(" ")')"
check_eq "the master links the driver's UI" "$DRIVER_HTTP" \
        "$(curl -fsS "$MASTER_HTTP/api/v1/applications" | jq -r '.apps[0].ui_url')"
job=$("$SPARKCTL" jobs --json | jq -r '.jobs[0].job_id')
check_eq "driver /api/v1/jobs is sparkctl jobs --json" \
        "$("$SPARKCTL" jobs --json | jq -S 'del(.jobs[].elapsed_ms)')" \
        "$(curl -fsS "$DRIVER_HTTP/api/v1/jobs" | jq -S 'del(.jobs[].elapsed_ms)')"
check_eq "driver /api/v1/jobs/ID is sparkctl job ID --json" \
        "$("$SPARKCTL" job "$job" --json | jq -S 'del(.elapsed_ms)')" \
        "$(curl -fsS "$DRIVER_HTTP/api/v1/jobs/$job" | jq -S 'del(.elapsed_ms)')"
check_eq "driver: the job's 40 tasks, each one attempt" "40 40" \
        "$(curl -fsS "$DRIVER_HTTP/api/v1/jobs/$job/tasks" |
                jq -r '"\(.tasks | length) \([.tasks[] | select(.attempts == 1 and .state == "succeeded")] | length)"')"
check_eq "worker /api/v1/status lists its executor with its unit" "1" \
        "$(curl -fsS "${WORKER_HTTP[1]}/api/v1/status" | jq '[.executors[] | select(.unit | startswith("spark-executor-"))] | length')"

# --- the UI's files, unknown paths -----------------------------------------------------
check_match "the master's page" '<title>spark-master</title>' "$(curl -fsS "$MASTER_HTTP/")"
check_match "the driver's page" '<title>spark-driver</title>' "$(curl -fsS "$DRIVER_HTTP/")"
check_match "the worker's page" '<title>spark-worker</title>' "$(curl -fsS "${WORKER_HTTP[1]}/")"
check_match "the script, as JavaScript" 'text/javascript' \
        "$(curl -fsS -o /dev/null -w '%{content_type}' "$MASTER_HTTP/ui.js")"
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
check_eq "an unknown path is 404" 404 "$(code "$MASTER_HTTP/nothing/here")"
check_eq "an unknown API path is 404" 404 "$(code "$MASTER_HTTP/api/v1/nothing")"
check_eq "an unknown job is 404" 404 "$(code "$DRIVER_HTTP/api/v1/jobs/job-999")"
check_eq "a job path with more after it is 404" 404 "$(code "$DRIVER_HTTP/api/v1/jobs/$job/tasks/1")"
check_eq "POST is refused" 405 "$(code -X POST --data x "$MASTER_HTTP/metrics")"
check_eq "DELETE is refused" 405 "$(code -X DELETE "$DRIVER_HTTP/api/v1/jobs/$job")"

# --- bad input ---------------------------------------------------------------------------
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$(daemon_pid master)/status"; }
rss_before=$(rss)
host=${MASTER_HTTP#http://}
python3 - "${host%:*}" "${host##*:}" >"$T/hostile.out" 2>&1 <<'PY' &
import socket, sys, threading, time
host, port = sys.argv[1], int(sys.argv[2])
answers = []
# oversized headers, an oversized URL, binary garbage, at once: libmicrohttpd
# answers 431 or 414, or closes at the idle timeout (10 s)
def bad(i):
    try:
        s = socket.create_connection((host, port), timeout=20)
        if i % 3 == 0:
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 200000 + b"\r\n\r\n")
        elif i % 3 == 1:
            s.sendall(b"\x00\xff GARBAGE \r\n\r\n")
        else:
            s.sendall(b"GET /" + b"p" * 100000 + b" HTTP/1.1\r\n\r\n")
        answers.append(s.recv(12)[9:12])
        s.close()
    except OSError as e:
        answers.append(type(e).__name__.encode())
threads = [threading.Thread(target=bad, args=(i,)) for i in range(30)]
for t in threads: t.start()
# slow clients: connections that send a byte now and then and never finish
slow = []
for i in range(100):
    try:
        s = socket.create_connection((host, port), timeout=5)
        s.sendall(b"GET /metr")
        slow.append(s)
    except OSError:
        pass
end = time.time() + 6
while time.time() < end:
    for s in slow:
        try:
            s.sendall(b"i")
        except OSError:
            pass
    time.sleep(1)
for t in threads: t.join()
print("held", len(slow))
print("answers", b" ".join(sorted(set(answers))).decode())
PY
hostile=$!
sleep 2
t0=$(date +%s%N)
check "the master's loop answers sparkctl while slow clients hold HTTP connections" quietly "$SPARKCTL" status
t1=$(date +%s%N)
check "... at once (under 2 s)" test $(((t1 - t0) / 1000000)) -lt 2000
check_eq "another client address still gets /metrics (the per-address cap)" 200 \
        "$(code --interface 127.0.0.2 --max-time 5 "$MASTER_HTTP/metrics")"
wait "$hostile"
check "the hostile client ran" grep -q '^held ' "$T/hostile.out"
check_match "oversized requests get 431 or 414, or are closed" '^answers( (431|414|)|( ConnectionResetError))*$' \
        "$(grep '^answers' "$T/hostile.out")"
check "after them, /metrics answers" wait_until 20 quietly curl -fsS --max-time 2 "$MASTER_HTTP/metrics"
rss_after=$(rss)
echo "# master RSS before ${rss_before} KiB, after ${rss_after} KiB"
check "the master's memory did not grow by more than 8 MiB" test $((rss_after - rss_before)) -lt 8192
check "the master still runs" daemon_alive master

# --- the workers by state, as they change ----------------------------------------------
# (kept by the master as workers change, not counted per scrape)
wid=$("$SPARKCTL" status --json | jq -r '.workers | sort_by(.worker_id) | .[0].worker_id')
check "sparkctl drain $wid" quietly "$SPARKCTL" drain "$wid" --timeout 30
# both series from one scrape: the worker may pass from draining to drained
# between two
drained_count() {
        curl -fsS "$MASTER_HTTP/metrics" |
                awk '$1 == "spark_workers{state=\"draining\"}" || $1 == "spark_workers{state=\"drained\"}" { n += $2; found++ }
                     END { if (found != 2) exit 1; print n }'
}
check_eq "master: 1 worker draining or drained" "1" "$(drained_count)"
check_eq "master: 1 alive worker left" "1" "$(obs_metric "$MASTER_HTTP" 'spark_workers{state="alive"}')"
check "sparkctl undrain $wid" quietly "$SPARKCTL" undrain "$wid"
check_eq "master: 2 alive workers again" "2" "$(obs_metric "$MASTER_HTTP" 'spark_workers{state="alive"}')"
check_eq "master: none draining" "0" "$(drained_count)"
