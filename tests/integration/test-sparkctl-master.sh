#!/usr/bin/env bash
# sparkctl against a real spark-master (no systemd needed): status as tables
# and as JSON, kill-app / kill-executor refused for unknown ids with the
# master's message, the driver-side commands refused by the master, the exit
# statuses for an unreachable daemon (3) and usage errors (2), and where the
# default URLs come from ($SPARK_CONF_DIR/cluster.conf, $SPARK_MASTER_URL,
# --master).
. "$(dirname "$0")/../harness/lib.sh"

T=$(harness_tmpdir)
SPARKCTL=$SPARK_BUILD/sparkctl
M=ipc://$T/master.sock
APP=app-20261129172233-0001

[ -x "$SPARKCTL" ] || die "no $SPARKCTL: build it first (make build/sparkctl)"

# run CMD...: sets $out, $err and $rc; never fails.
run() {
        out=$("$@" 2>"$T/stderr")
        rc=$?
        err=$(cat "$T/stderr")
}

valid_json() {
        python3 -m json.tool >/dev/null <<<"$1"
}

cat >"$T/master.conf" <<CONF
cluster: { master = "$M"; master_events = "ipc://$T/events.sock"; };
master: { listen = "$M"; events_listen = "ipc://$T/events.sock"; state_dir = "$T/state"; };
CONF
start_daemon master "$SPARK_BUILD/spark-master" --config "$T/master.conf"
check "the master answers" wait_for quietly "$SPARKCTL" --master "$M" status

# --- status -------------------------------------------------------------------
run "$SPARKCTL" --master "$M" status
check_eq "status exits 0" 0 "$rc"
check_match "status names the master and counts" \
        '^Master master-[0-9]+: 0 workers, 0 applications, 0 executors$' "$out"

run "$SPARKCTL" --master "$M" status --json
check_eq "status --json exits 0" 0 "$rc"
check "status --json is valid JSON" valid_json "$out"
check_eq "status --json has the snapshot's members" "master workers=0 apps=0 executors=0" \
        "$(python3 -c '
import json, sys
d = json.load(sys.stdin)
print("master" if d["master_id"].startswith("master-") else "?",
      "workers=%d apps=%d executors=%d" % (len(d["workers"]), len(d["apps"]), len(d["executors"])))' <<<"$out")"
check_eq "status --json is one line" 1 "$(printf '%s\n' "$out" | wc -l)"

# --- kill-app / kill-executor: the master's answer -------------------------------
run "$SPARKCTL" --master "$M" kill-app "$APP"
check_eq "kill-app of an unknown application exits 1" 1 "$rc"
check_match "kill-app shows the master's message" "^sparkctl: unknown application $APP\$" "$err"

run "$SPARKCTL" --master "$M" kill-executor "$APP" 2
check_eq "kill-executor of an unknown executor exits 1" 1 "$rc"
check_match "kill-executor shows the master's message" "unknown executor $APP/2" "$err"

# a driver request sent to the master: refused with an Error, not a hang
run "$SPARKCTL" --driver "$M" jobs
check_eq "jobs sent to the master exits 1" 1 "$rc"
check_match "the master says it does not handle it" "does not handle" "$err"

# --- unreachable: exit 3 ------------------------------------------------------------
run "$SPARKCTL" --master "ipc://$T/nobody.sock" status
check_eq "status with nobody at an ipc:// URL exits 3" 3 "$rc"
check_match "it says which master it could not reach" \
        "^sparkctl: cannot reach the master at ipc://$T/nobody.sock: " "$err"

port=$(free_port) || die "no free port"
run "$SPARKCTL" --master "tcp://127.0.0.1:$port" kill-app "$APP"
check_eq "kill-app with nobody at a tcp:// URL exits 3" 3 "$rc"
check_match "connection refused is reported" \
        "cannot reach the master at tcp://127.0.0.1:$port: Connection refused" "$err"

run env SPARK_CONF_DIR="$T/empty" SPARK_DRIVER_URL="ipc://$T/nodriver.sock" "$SPARKCTL" jobs
check_eq "jobs with no driver exits 3" 3 "$rc"
check_match "it names the driver" "cannot reach the driver at ipc://$T/nodriver.sock" "$err"

# --- default URLs -----------------------------------------------------------------
mkdir -p "$T/conf"
printf 'cluster: { master = "%s"; };\n' "$M" >"$T/conf/cluster.conf"
run env SPARK_CONF_DIR="$T/conf" SPARK_MASTER_URL= "$SPARKCTL" status
check_eq "the master URL comes from \$SPARK_CONF_DIR/cluster.conf" 0 "$rc"
run env SPARK_CONF_DIR="$T/conf" SPARK_MASTER_URL="ipc://$T/nobody.sock" "$SPARKCTL" status
check_eq "\$SPARK_MASTER_URL overrides cluster.conf" 3 "$rc"
run env SPARK_CONF_DIR="$T/conf" SPARK_MASTER_URL="ipc://$T/nobody.sock" "$SPARKCTL" --master "$M" status
check_eq "--master overrides \$SPARK_MASTER_URL" 0 "$rc"
run env SPARK_CONF_DIR="$T/empty" SPARK_MASTER_URL="$M" "$SPARKCTL" status
check_eq "\$SPARK_MASTER_URL alone is enough" 0 "$rc"

# --- usage errors: exit 2, usage on stderr, nothing asked --------------------------
usage_error() {
        local what=$1
        shift
        run "$SPARKCTL" --master "$M" "$@"
        check_eq "usage error exits 2: $what" 2 "$rc"
        check_match "usage error prints the usage: $what" "^Usage: sparkctl" "$(sed -n '2p' <<<"$err")"
}
usage_error "no command"
usage_error "unknown command" frobnicate
usage_error "extra argument" status now
usage_error "bad application id" kill-app app-1
usage_error "bad executor id" kill-executor "$APP" zero
usage_error "submit without a task source" submit --count 3
usage_error "submit with --arg and --inputs" submit --command 'echo {}' --inputs /dev/null --arg x
usage_error "--json where it means nothing" kill-app "$APP" --json
run "$SPARKCTL" --master "http://x:1" status
check_eq "a URL of another scheme is a usage error" 2 "$rc"
run "$SPARKCTL" --bogus-option status
check_eq "an unknown option is a usage error" 2 "$rc"
run env SPARK_MASTER_URL="tcp://nohost" "$SPARKCTL" status
check_eq "a bad \$SPARK_MASTER_URL is a usage error" 2 "$rc"
check_match "it names the variable" "SPARK_MASTER_URL" "$err"

run "$SPARKCTL" --help
check_eq "--help exits 0" 0 "$rc"
check_match "--help shows the commands" "kill-executor APP EXEC" "$out"
run "$SPARKCTL" --version
check_match "--version prints the version" '^sparkctl [0-9]+\.[0-9]+' "$out"

# --- the master goes away -------------------------------------------------------------
stop_daemon master
run "$SPARKCTL" --master "$M" status
check_eq "status after the master stopped exits 3" 3 "$rc"
