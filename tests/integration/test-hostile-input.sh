#!/usr/bin/env bash
# Bad input (docs/DESIGN.md §9): a hostile client sends the master's, the worker's and
# the driver's request endpoints malformed, truncated, oversized,
# wrong-version and unknown-type messages, requests for ids nobody has, and
# hostile values (cores = -1, memory = 2^63-1, ids with '/', '..', spaces,
# newlines or shell and unit-name syntax, environment entries that would
# inject lines, INT_MAX executor ids, task indices out of range, negative
# offsets, absurd task counts).  Each must get a clear Error (the test checks
# its code and that its message names the problem), the cluster must look
# exactly as before (sparkctl status --json, sparkctl jobs --json, the
# worker's executors, the executor units), and every daemon must go on
# serving: a real job runs at the end.
#
# A few answers are not Errors by design, and the test checks them as such:
# an oversized message makes nng drop the connection before any of our code
# sees it (the peer gets no answer; the daemon carries on); a poll from an
# executor the driver does not know is told to shut down (PollReply
# shutdown=1), which is how an executor learns it is not wanted; a heartbeat
# from an unknown worker is told to register; and a worker asked to kill an
# executor it does not hold says done (and tells the master it ended, so the
# master never waits for it).
# shellcheck source=tests/harness/lib.sh
. "$(dirname "$0")/../harness/lib.sh"
require_user_manager

tmp=$(harness_tmpdir)
HC=$SPARK_BUILD/tests/helpers/hostile-client
lib=$SPARK_BUILD/tests/helpers/tasks/spark-driver-tasks.so
[ -x "$HC" ] || die "$HC is not built (make test-helpers)"
[ -f "$lib" ] || die "$lib is not built (make test-helpers)"

M=ipc://$tmp/master.sock
W=ipc://$tmp/worker.sock
D=ipc://$tmp/driver.sock
cat >"$tmp/cluster.conf" <<EOF
cluster: { master = "$M"; master_events = "ipc://$tmp/master-events.sock"; };
master: { listen = "$M"; events_listen = "ipc://$tmp/master-events.sock"; state_dir = "$tmp/state"; };
driver: { app_name = "hostile-test"; listen = "$D"; events_listen = "ipc://$tmp/driver-events.sock";
          cores_per_executor = 1; executor_memory_mb = 256; executor_heartbeat_timeout_ms = 5000;
          locality_wait_ms = 0; executor_env = { SPARK_FAKE_MODE = "sleep"; }; };
EOF
# worker_conf NAME CORES MEMORY_MB WORK_DIR EXECUTOR: $tmp/NAME.conf, a worker
# listening on ipc://$tmp/NAME.sock that starts EXECUTOR
worker_conf() {
        cat >"$tmp/$1.conf" <<EOF
@include "cluster.conf"
worker: { listen = "ipc://$tmp/$1.sock"; events_listen = "ipc://$tmp/$1-events.sock";
          cores = $2; memory_mb = $3; systemd_bus = "user"; work_dir = "$tmp/$4"; heartbeat_ms = 500;
          executor_binary = "$5"; executor_slice = "spark-test.slice"; };
EOF
}
worker_conf worker 2 2048 work "$SPARK_BUILD/spark-executor"
worker_conf worker2 1 1024 work2 "$SPARK_BUILD/tests/helpers/fake-executor"
stop_user_units_on_exit 'spark-executor-*'

sparkctl() { "$SPARK_BUILD/sparkctl" --master "$M" --driver "$D" "$@"; }
n_active_units() { systemctl --user list-units --no-legend --plain 'spark-executor-*' | awk '$3 == "active"' | wc -l; }
units_running() { [ "$(n_active_units)" -ge "$1" ]; }
driver_log_has() { grep -Eq "$1" "$(daemon_log driver)"; }

start_daemon master "$SPARK_BUILD/spark-master" --config "$tmp/cluster.conf"
start_daemon worker "$SPARK_BUILD/spark-worker" --config "$tmp/worker.conf"
start_daemon driver "$SPARK_BUILD/spark-driver" --config "$tmp/cluster.conf"
check "two executor units start" wait_until 30 units_running 2
check "both executors register with the driver" wait_until 30 executor_registered 2

printf '1\n2\n3\n' >"$tmp/numbers"
rc=0
sparkctl submit --function "$lib:square" --inputs "$tmp/numbers" >"$tmp/out1" 2>&1 || rc=$?
check_eq "a first job runs (it is job-0001 in what follows)" "0 1 4 9" "$rc $(tr '\n' ' ' <"$tmp/out1" | sed 's/ $//')"

status_json=$(sparkctl status --json)
read -r APP WID < <(python3 -c '
import json, sys
d = json.loads(sys.argv[1])
print(d["apps"][0]["app_id"], d["workers"][0]["worker_id"])' "$status_json") || die "no app or worker in: $status_json"
echo "# app $APP, worker $WID"

# --- what "unchanged" means ----------------------------------------------------

# The cluster as its users see it, without the clocks (heartbeat ages,
# elapsed times): the master's snapshot, the driver's jobs, the worker's
# executors and the executor units.
cluster_state() {
        python3 - "$SPARK_BUILD/sparkctl" "$M" "$D" <<'PY'
import json, subprocess, sys
ctl, master, driver = sys.argv[1:]
def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if k not in ("last_heartbeat_ms_ago", "elapsed_ms")}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x
for args in (["--master", master, "status", "--json"], ["--driver", driver, "jobs", "--json"]):
    out = subprocess.run([ctl] + args, capture_output=True, text=True).stdout
    for line in out.splitlines():
        print(json.dumps(strip(json.loads(line)), sort_keys=True))
PY
        "$HC" "$W" send cluster_state_request
        systemctl --user list-units --all --plain --no-legend 'spark-executor-*' | awk '{ print $1, $3, $4 }' | sort
}

# hostile WHAT REGEX [OPTIONS] URL REQUEST...: one hostile request (see
# tests/helpers/hostile-client.c); its answer (the answers of several
# requests joined by " // ") must match REGEX and the cluster must look
# exactly as it did before.
hostile() {
        local what=$1 regex=$2 before after out
        shift 2
        before=$(cluster_state)
        # bounded: a client stuck on its way out fails this check, not the run
        out=$(timeout 60 "$HC" "$@" 2>&1 | sed ':a;N;$!ba;s/\n/ \/\/ /g')
        check_match "$what" "$regex" "$out"
        after=$(cluster_state)
        if [ "$before" = "$after" ]; then
                pass "$what: nothing changed"
        else
                fail "$what: the cluster changed"
                diff <(echo "$before") <(echo "$after") | head -n 20 | sed 's/^/#   /'
        fi
}

# still_serving NAME URL BODY REPLY: the daemon runs and answers a plain
# request BODY with REPLY.
still_serving() {
        local name=$1 url=$2 body=$3 reply=$4
        check "$name is still running" daemon_alive "$name"
        check_match "$name still answers" "^reply $reply" "$("$HC" "$url" send "$body" 2>&1)"
}

baseline=$(cluster_state)
[ -n "$baseline" ] || die "cannot read the cluster's state"
# executor keys: a good length (32 bytes) and a bad one
head -c 32 /dev/urandom >"$tmp/key32"
head -c 31 /dev/urandom >"$tmp/key31"

# --- every endpoint: malformed, truncated, oversized, wrong version, unknown type -

# malformed NAME URL FOREIGN-BODY LIMIT PLAIN-BODY PLAIN-REPLY
malformed() {
        local name=$1 url=$2 foreign=$3 limit=$4 body=$5 reply=$6
        hostile "$name: garbage bytes" '^error -74 invalid request: not a well-formed message' "$url" garbage 100
        hostile "$name: an empty message (no version, no body)" '^error -93 invalid request: unsupported protocol version' \
                "$url" raw ''
        hostile "$name: a truncated message" '^error -74 invalid request: not a well-formed message' \
                --truncate -2 "$url" send register_application name=x driver_url=ipc:///tmp/x.sock \
                cores_per_executor=1 executor_memory_mb=64
        hostile "$name: a message cut in its length prefix" '^error -74 .*malformed or truncated' --truncate 3 "$url" \
                send cluster_state_request app_id=app-20261129172233-0001
        hostile "$name: protocol version 2" '^error -93 .*unsupported protocol version \(this daemon speaks version 1\)' \
                --version 2 "$url" send cluster_state_request
        hostile "$name: protocol version 0" '^error -93 .*unsupported protocol version' --version 0 "$url" \
                send cluster_state_request
        hostile "$name: an unknown body type" '^error -42 .*message type this daemon does not know' "$url" unknown-body
        hostile "$name: a request for another daemon" "^error -95 .*does not handle $foreign" \
                "$url" send "$foreign"
        hostile "$name: a reply sent as a request" '^error -95 .*does not handle ack' "$url" send ack
        hostile "$name: a message beyond the receive limit ($limit MiB) is dropped with its connection" \
                '^noreply ' --timeout 5000 --pad $(((limit + 1) * 1024 * 1024)) "$url" send "$body"
        still_serving "$name" "$url" "$body" "$reply"
}

malformed master "$M" submit_job 16 cluster_state_request cluster_state
malformed worker "$W" submit_job 16 cluster_state_request cluster_state
malformed driver "$D" register_worker 256 list_jobs job_list

# --- master: hostile values and unknown ids ----------------------------------------

EVIL=worker-20261129172233-evil-7078
reg_worker() { hostile "$1" "$2" "$M" send register_worker "worker_id=$EVIL" host=evil \
        "endpoint=ipc://$tmp/evil.sock" cores=2 memory_mb=1024 "${@:3}"; }
reg_worker "master: RegisterWorker with cores = -1" '^error -22 invalid cores \(-1\)' cores=-1
reg_worker "master: RegisterWorker with memory = 2^63-1" \
        '^error -22 .*memory \(9223372036854775807 MiB\)' memory_mb=9223372036854775807
reg_worker "master: RegisterWorker with a worker id '../../etc'" '^error -22 invalid worker' worker_id=../../etc
reg_worker "master: RegisterWorker with a worker id with a '/'" '^error -22 invalid worker' \
        worker_id=worker-20261129172233-a/b-1
reg_worker "master: RegisterWorker with a worker id with a space and a newline" '^error -22 invalid worker' \
        "worker_id=worker-20261129172233-a b
-1"
reg_worker "master: RegisterWorker with a host 'evil;rm -rf /'" '^error -22 invalid host' "host=evil;rm -rf /"
reg_worker "master: RegisterWorker with an endpoint that carries a second line" '^error -22 invalid host or endpoint' \
        "endpoint=ipc://$tmp/a
ExecStart=/bin/sh"
reg_worker "master: RegisterWorker with a tcp endpoint without a port" '^error -22 invalid host or endpoint' \
        "endpoint=tcp://evil"
reg_worker "master: RegisterWorker reporting an executor of app '../../etc'" \
        '^error -22 invalid executor in worker registration' executors.0.app_id=../../etc executors.0.executor_id=1
reg_worker "master: RegisterWorker reporting executor id -5" \
        '^error -22 invalid executor in worker registration' "executors.0.app_id=$APP" executors.0.executor_id=-5
reg_worker "master: RegisterWorker taking over the real worker's id from another endpoint" \
        "^error -17 worker id $WID is registered from another endpoint" "worker_id=$WID"

hostile "master: Heartbeat with a worker id '../x'" '^error -22 invalid worker id' \
        "$M" send heartbeat worker_id=../x
hostile "master: Heartbeat of an unknown worker is told to register (nothing else)" \
        '^reply heartbeat_reply reregister=1' "$M" send heartbeat "worker_id=$EVIL"

esc() { hostile "$1" "$2" "$M" send executor_state_changed "worker_id=$WID" "app_id=$APP" "${@:3}"; }
esc "master: ExecutorStateChanged for app 'app-1;rm'" '^error -22 invalid worker or application id' \
        "app_id=app-1;rm" executor_id=1 state=EXECUTOR_FAILED
esc "master: ExecutorStateChanged from a worker that does not hold the executor" '^error -116 cannot apply state' \
        "worker_id=$EVIL" executor_id=1 state=EXECUTOR_FAILED
esc "master: ExecutorStateChanged to an unknown state (99)" '^error -22 ' executor_id=1 state=99
esc "master: ExecutorStateChanged back to LAUNCHING" '^error -22 ' executor_id=1 state=EXECUTOR_LAUNCHING
esc "master: ExecutorStateChanged to STATE_UNKNOWN" '^error -22 ' executor_id=1 state=EXECUTOR_STATE_UNKNOWN

reg_app() { hostile "$1" "$2" "$M" send register_application name=evil "driver_url=ipc://$tmp/evil-driver.sock" \
        cores_per_executor=1 executor_memory_mb=64 executor_key=@"$tmp/key32" "${@:3}"; }
reg_app "master: RegisterApplication with a 31-byte executor key" '^error -22 executor_key has 31 bytes, not 32' \
        executor_key=@"$tmp/key31"
reg_app "master: RegisterApplication with an empty executor key" '^error -22 executor_key has 0 bytes, not 32' \
        executor_key=""
reg_app "master: re-registering the running app under another executor key" \
        "^error -17 application $APP is registered with another executor key" app_id="$APP" \
        driver_url="$D"
reg_app "master: RegisterApplication with a driver URL that carries a second line" \
        '^error -22 invalid driver endpoint' "driver_url=ipc://$tmp/x
ExecStart=/bin/sh"
reg_app "master: RegisterApplication named 'a b;rm -rf /'" '^error -22 .*application name' "name=a b;rm -rf /"
reg_app "master: RegisterApplication with cores_per_executor = -1" '^error -22 invalid application registration' \
        cores_per_executor=-1
reg_app "master: RegisterApplication with max_cores = -1" '^error -22 invalid application registration' max_cores=-1
reg_app "master: RegisterApplication with executor memory = 2^63-1" '^error -22 invalid application registration' \
        executor_memory_mb=9223372036854775807
reg_app "master: RegisterApplication with an environment name 'A=B'" '^error -22 invalid application registration' \
        executor_env.0.key=A=B executor_env.0.value=1
reg_app "master: RegisterApplication with an environment name with a newline" \
        '^error -22 invalid application registration' "executor_env.0.key=A
B" executor_env.0.value=1
reg_app "master: RegisterApplication setting LD_PRELOAD to a value with a newline" \
        '^error -22 invalid application registration' executor_env.0.key=LD_PRELOAD "executor_env.0.value=/x.so
ExecStartPre=/bin/sh"
reg_app "master: RegisterApplication setting SPARK_APP_ID (the worker's)" '^error -22 invalid application registration' \
        executor_env.0.key=SPARK_APP_ID executor_env.0.value=app-1
reg_app "master: RegisterApplication setting SPARK_EXECUTOR_CORES (the worker's)" \
        '^error -22 invalid application registration' executor_env.0.key=SPARK_EXECUTOR_CORES executor_env.0.value=64
reg_app "master: RegisterApplication setting SPARK_TLS_CA_FILE (the worker's)" \
        '^error -22 invalid application registration' executor_env.0.key=SPARK_TLS_CA_FILE executor_env.0.value=/tmp/ca.pem
reg_app "master: RegisterApplication re-registering as app '../../etc'" '^error -22 ' app_id=../../etc

hostile "master: UnregisterApplication of app 'app-1;rm'" '^error -22 invalid application id' \
        "$M" send unregister_application "app_id=app-1;rm"
hostile "master: UnregisterApplication of app '../../etc'" '^error -22 invalid application id' \
        "$M" send unregister_application app_id=../../etc
hostile "master: KillApplication of an unknown app" '^error -2 unknown application app-20991231235959-0001' \
        "$M" send kill_application app_id=app-20991231235959-0001
hostile "master: KillExecutor with executor id INT_MAX" "^error -2 unknown executor $APP/2147483647" \
        "$M" send kill_executor "app_id=$APP" executor_id=2147483647
hostile "master: KillExecutor with executor id -1" "^error -2 unknown executor $APP/-1" \
        "$M" send kill_executor "app_id=$APP" executor_id=-1
hostile "master: KillExecutor of app '../../etc'" '^error -22 invalid application id' \
        "$M" send kill_executor app_id=../../etc executor_id=1
hostile "master: RequestExecutors with total = -1" '^error -22 invalid application id or executor count' \
        "$M" send request_executors "app_id=$APP" total=-1
hostile "master: RequestExecutors for an unknown app" '^error -2 unknown application' \
        "$M" send request_executors app_id=app-20991231235959-0001 total=1
still_serving master "$M" cluster_state_request cluster_state

# --- worker -------------------------------------------------------------------------

launch() { hostile "$1" "$2" "$W" send launch_executor "app_id=$APP" executor_id=77 "worker_id=$WID" cores=1 \
        memory_mb=64 "driver_url=$D" executor_key=@"$tmp/key32" "${@:3}"; }
launch "worker: LaunchExecutor with a 31-byte executor key" '^error -22 executor_key has 31 bytes, not 32' \
        executor_key=@"$tmp/key31"
launch "worker: LaunchExecutor without an executor key" '^error -22 executor_key has 0 bytes, not 32' executor_key=""

launch "worker: LaunchExecutor for app 'app-1;rm'" '^error -22 invalid application or executor id' "app_id=app-1;rm"
launch "worker: LaunchExecutor for app '../../etc'" '^error -22 invalid application or executor id' app_id=../../etc
launch "worker: LaunchExecutor with executor id -1" '^error -22 invalid application or executor id' executor_id=-1
launch "worker: LaunchExecutor for another worker" "^error -116 this is worker $WID, not $EVIL" "worker_id=$EVIL"
launch "worker: LaunchExecutor with cores = -1" '^error -22 invalid cores \(-1\)' cores=-1
launch "worker: LaunchExecutor with more cores than the worker has" '^error -22 invalid cores \(3\)' cores=3
launch "worker: LaunchExecutor with memory = 2^63-1" '^error -22 .*memory \(9223372036854775807 MiB\)' \
        memory_mb=9223372036854775807
launch "worker: LaunchExecutor with a driver URL that carries a second line" '^error -22 invalid driver URL' \
        "driver_url=$D
ExecStart=/bin/sh"
launch "worker: LaunchExecutor with a driver URL with spaces" '^error -22 invalid driver URL' \
        "driver_url=tcp://h:1 --app-id x"
launch "worker: LaunchExecutor with an environment name 'A=B'" '^error -22 .*(A=B|not a valid name|environment)' \
        env.0.key=A=B env.0.value=1
launch "worker: LaunchExecutor with an environment value with a newline" '^error -22 .*(LD_PRELOAD|control|newline)' \
        env.0.key=LD_PRELOAD "env.0.value=/x.so
ExecStartPre=/bin/sh"
launch "worker: LaunchExecutor setting SPARK_APP_ID" '^error -22 .*SPARK_APP_ID' \
        env.0.key=SPARK_APP_ID env.0.value=app-1
launch "worker: LaunchExecutor setting SPARK_TLS_KEY_FILE" '^error -22 .*may not set SPARK_TLS_KEY_FILE' \
        env.0.key=SPARK_TLS_KEY_FILE env.0.value=/tmp/mine.key
hostile "worker: KillExecutor of app '../../etc'" '^error -22 invalid application or executor id' \
        "$W" send kill_executor app_id=../../etc executor_id=1
hostile "worker: KillExecutor with executor id 0" '^error -22 invalid application or executor id' \
        "$W" send kill_executor "app_id=$APP" executor_id=0
# Stopping what is not there is done: the worker says so to the master (so
# that it never waits for the executor), then forgets it.
before=$(cluster_state)
check_match "worker: KillExecutor of an executor it does not hold (INT_MAX) is done at once" '^reply ack' \
        "$("$HC" "$W" send kill_executor "app_id=$APP" executor_id=2147483647 2>&1)"
same_as_before() { [ "$(cluster_state)" = "$before" ]; }
check "worker: ... and once the master has heard of it, nothing changed" wait_until 5 same_as_before
still_serving worker "$W" cluster_state_request cluster_state

# --- driver -------------------------------------------------------------------------

reg_exec() { hostile "$1" "$2" "$D" send register_executor "app_id=$APP" executor_id=77 host=evil cores=1 pid=1 \
        "${@:3}"; }
reg_exec "driver: RegisterExecutor for another app" "^error -116 this driver runs application $APP" \
        app_id=app-20991231235959-0001
reg_exec "driver: RegisterExecutor with executor id INT_MAX" '^error -22 invalid executor registration' \
        executor_id=2147483647
reg_exec "driver: RegisterExecutor with executor id -1" '^error -22 invalid executor registration' executor_id=-1
reg_exec "driver: RegisterExecutor with cores = -1" '^error -22 invalid executor registration' cores=-1
reg_exec "driver: RegisterExecutor from host '../x'" '^error -22 invalid executor registration' host=../x
reg_exec "driver: RegisterExecutor from host 'a b'" '^error -22 invalid executor registration' "host=a b"
reg_exec "driver: RegisterExecutor from worker 'w;rm'" '^error -22 invalid executor registration' "worker_id=w;rm"
# Each registration and poll must carry the executor's secret, checked
# before the rest: the worker, app and id checks behind it are in
# test-driver-executor.sh, with a real secret.
reg_exec "driver: RegisterExecutor taking a registered executor's id, without its secret" \
        "^error -1 registration as executor 1 of $APP refused: no executor secret" executor_id=1 "worker_id=$WID"
reg_exec "driver: RegisterExecutor taking a registered executor's id, with a made-up secret" \
        "^error -1 registration as executor 1 of $APP refused: wrong executor secret" executor_id=1 "worker_id=$WID" \
        secret=@"$tmp/key32"
reg_exec "driver: RegisterExecutor under an id the master never started" \
        "^error -1 registration as executor 77 of $APP refused: no executor secret" "worker_id=$WID"

hostile "driver: Poll as executor INT_MAX is refused" '^error -22 invalid executor id 2147483647' \
        "$D" send poll "app_id=$APP" executor_id=2147483647
hostile "driver: Poll as a registered executor without its secret is refused" \
        "^error -1 poll as executor 1 of $APP refused: no executor secret" "$D" send poll "app_id=$APP" executor_id=1
hostile "driver: Poll of an executor it does not know, with a made-up secret, is refused" \
        "^error -1 poll as executor 99 of $APP refused: wrong executor secret" "$D" send poll "app_id=$APP" \
        executor_id=99 secret=@"$tmp/key32"
hostile "driver: Poll for another app is told to shut down" '^reply poll_reply shutdown=1 .*not this driver' \
        "$D" send poll app_id=app-20991231235959-0001 executor_id=1
sj() { hostile "$1" "$2" "$D" send submit_job name=evil kind=TASK_FUNCTION library=x symbol=square "${@:3}"; }
sj "driver: SubmitJob with count 0" '^error -22 a job needs inputs or a task count' count=0
sj "driver: SubmitJob with count 2^31-1" '^error -22 a job needs inputs or a task count' count=2147483647
sj "driver: SubmitJob with count -1" '^error -22 a job needs inputs or a task count' count=-1
sj "driver: SubmitJob with a symbol with shell syntax" '^error -22 .*valid symbol name' count=1 \
        'symbol=square;rm -rf /'
sj "driver: SubmitJob with a symbol '../x'" '^error -22 .*valid symbol name' count=1 symbol=../x
sj "driver: SubmitJob without a shared object" '^error -22 .*shared object' count=1 library=
sj "driver: SubmitJob with an unknown task kind" '^error -22 unknown task kind' count=1 kind=7
sj "driver: SubmitJob with both inputs and a different count" '^error -22 a job needs inputs' count=5 inputs.0=a
sj "driver: SubmitJob named with a newline" '^error -22 invalid job name' count=1 "name=a
b"
sj "driver: SubmitJob preferring host '../x'" '^error -22 invalid preferred host' count=1 preferred_hosts.0=../x
hostile "driver: a command SubmitJob with an empty command line" '^error -22 .*command line is empty' \
        "$D" send submit_job kind=TASK_COMMAND inputs.0=

hostile "driver: FetchResults from index -1" '^error -22 from_index -1 out of range' \
        "$D" send fetch_results job_id=job-0001 from_index=-1
hostile "driver: FetchResults from index INT_MAX" '^error -22 from_index 2147483647 out of range' \
        "$D" send fetch_results job_id=job-0001 from_index=2147483647
hostile "driver: FetchResults of an unknown job" "^error -2 no job 'job-9999'" \
        "$D" send fetch_results job_id=job-9999
hostile "driver: JobStatus of job '../../etc'" "^error -2 no job '../../etc'" "$D" send job_status job_id=../../etc
hostile "driver: CancelJob of an unknown job" "^error -2 no job 'job-9999'" "$D" send cancel_job job_id=job-9999
hostile "driver: FetchLibrary of an unknown hash" "^error -2 no library with hash '../../etc/passwd'" \
        "$D" send fetch_library hash=../../etc/passwd
still_serving driver "$D" list_jobs job_list

# --- afterwards ----------------------------------------------------------------------

after=$(cluster_state)
check_eq "after everything the cluster looks as it did before" "$baseline" "$after"
rc=0
sparkctl submit --function "$lib:square" --inputs "$tmp/numbers" >"$tmp/out2" 2>&1 || rc=$?
check_eq "a job still runs, with the right results" "0 1 4 9" "$rc $(tr '\n' ' ' <"$tmp/out2" | sed 's/ $//')"

# --- results that are not for a task of the job ----------------------------------------
# Only an executor the master started may register (the checks above), so
# this needs one that is started but never registers itself: a second
# worker whose executor_binary only sleeps (tests/helpers/fake-executor;
# SPARK_FAKE_MODE comes from the app's executor_env and the real executors
# ignore it).  The hostile client takes that executor's place and reports
# nonsense, on one connection; each poll must be refused whole (its second
# result is a good one) and job-0001 must stay as it was.  Last, because
# the executor is lost when the connection closes and then replaced.
start_daemon worker2 "$SPARK_BUILD/spark-worker" --config "$tmp/worker2.conf"
stub_executor() {
        sparkctl status --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
w = [w["worker_id"] for w in d["workers"] if w["worker_id"] != sys.argv[1]]
e = [e for e in d["executors"] if w and e["worker_id"] == w[0] and e["state"] == "running"]
print(w[0], e[0]["executor_id"]) if e else sys.exit(1)' "$WID"
}
check "the master starts an executor on the sleeping worker" wait_until 30 quietly stub_executor
read -r SWID SEID < <(stub_executor)
# The hostile client takes its place with its secret, read (as root) from
# its worker: only that worker could have handed it to the unit.
SSECRET=$XDG_RUNTIME_DIR/spark-worker/secrets/$(sed 's/[^A-Za-z0-9._-]/_/g' <<<"ipc://$tmp/worker2.sock")
SSECRET=$SSECRET/spark-executor-$APP-$SEID.service
check "... whose secret its worker keeps for it" test -s "$SSECRET"
job_0001() { sparkctl jobs --json | python3 -c '
import json, sys
print([j for j in json.load(sys.stdin)["jobs"] if j["job_id"] == "job-0001"])'; }
job_before=$(job_0001)
bad_poll() { echo + send poll "app_id=$APP" "executor_id=$SEID" "secret=@$SSECRET" results.0.job_id=job-0001 \
        results.1.job_id=job-0001 results.1.index=0 results.1.attempt=1 "$@"; }
# shellcheck disable=SC2046 # bad_poll prints words for hostile-client
out=$("$HC" "$D" send register_executor "app_id=$APP" "executor_id=$SEID" "worker_id=$SWID" host=evil cores=1 \
        pid=1 "secret=@$SSECRET" $(bad_poll results.0.index=5000 results.0.attempt=1) $(bad_poll results.0.index=-1 results.0.attempt=1) \
        $(bad_poll results.0.index=0 results.0.attempt=0) 2>&1 | sed ':a;N;$!ba;s/\n/ \/\/ /g')
check_match "driver: the executor the master started registers" '^reply register_executor_reply // ' "$out"
check_match "driver: a result for task 5000 of a job of 3 tasks is refused" \
        '^reply register_executor_reply // error -22 .*task 5000 .*job-0001' "$out"
check_match "driver: a result for task -1 is refused" '^[^/]*// [^/]*// error -22 .*task -1 ' "$out"
check_match "driver: a result of attempt 0 is refused" '^[^/]*// [^/]*// [^/]*// error -22 .*attempt 0' "$out"
check_eq "driver: ... and job-0001 is as it was" "$job_before" "$(job_0001)"

for d in master worker worker2 driver; do
        check "$d did not crash" daemon_alive "$d"
done
check "no daemon logged a sanitizer report" bash -c "! grep -l -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' \
        '$(daemon_log master)' '$(daemon_log worker)' '$(daemon_log worker2)' '$(daemon_log driver)'"
