# shellcheck shell=bash
# Helpers for black-box tests (bash).  A test is tests/integration/test-*.sh:
#
#   #!/usr/bin/env bash
#   . "$(dirname "$0")/../harness/lib.sh"
#   require_user_manager
#   port=$(free_port)
#   start_daemon master "$SPARK_BUILD/spark-master" --config "$(harness_tmpdir)/master.conf"
#   check "master answers" wait_for "$SPARK_BUILD/sparkctl" --master "tcp://127.0.0.1:$port" status
#   check_eq "job output" "hello" "$(cat "$(harness_tmpdir)/out")"
#
# Every check prints "ok N - what" or "not ok N - what".  On exit (normal,
# failed command, ^C, TERM) a trap stops the daemons the test started, stops
# leftover units the test named with stop_user_units_on_exit, prints the tail
# of every daemon log if anything failed, and makes the script exit non-zero
# if any check failed or none ran.  Exit 77 (skip_all) means "skipped".
#
# Environment:
#   SPARK_BUILD          the build dir with the programs (build/ or build-san/);
#                        defaults to build/ next to this file
#   XDG_RUNTIME_DIR, DBUS_SESSION_BUS_ADDRESS
#                        the user manager's (tests/run-integration.sh exports
#                        them from tests/harness/usermgr.sh's env file)
#   SPARK_TEST_KEEP=1    keep the test's temp dir even when every check passed
#
# The journal: units of the test manager log through the host's journald, and
# their lines carry _SYSTEMD_UNIT=NAME.service as on a real host, so
#   unit_journal 'spark-executor-*'      (journalctl -u PATTERN, this test only)
#   journalctl _SYSTEMD_UNIT=NAME SYSLOG_IDENTIFIER=spark-executor
# find them (not `journalctl --user`: the manager runs as root, whose user
# journal is the system one).  LogExtraFields= is not applied for a user
# manager's units (docs/DESIGN.md §12), so match on _SYSTEMD_UNIT/SYSLOG_IDENTIFIER.
# Journald writes asynchronously: poll, e.g.
#   check "executor said hi" wait_for journal_grep 'spark-executor-*' 'hi'
#
# Unit files for the test manager (e.g. a spark-driver@.service for the user
# bus) go in $SPARK_TEST_UNIT_DIR, followed by `systemctl --user daemon-reload`;
# stop_user_units_on_exit 'NAME*' makes sure they are stopped.
#
# Note that systemd expands $VAR and $$ in ExecStart=: a literal "$" in a
# command given to systemd-run or StartTransientUnit must be written "$$".
#
# Sourcing this file turns on `set -u`.  die/fail inside $(...) only end the
# subshell: call them from the test's own shell.

set -u

HARNESS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SPARK_SRC=$(cd "$HARNESS_DIR/../.." && pwd)
: "${SPARK_BUILD:=$SPARK_SRC/build}"
export SPARK_BUILD SPARK_SRC

TEST_NAME=$(basename "$0" .sh)
TEST_T0=$(date +%s)              # journal queries start here
# Not under /tmp or /var/tmp: executors run with PrivateTmp= and see neither,
# and they need what a test keeps here (task libraries, ipc:// sockets, work
# dirs) as a real deployment keeps it in /var/lib and /run.
: "${SPARK_TEST_ROOT:=/var/lib/spark-test}"
mkdir -p "$SPARK_TEST_ROOT"
TEST_TMPDIR=$(mktemp -d "$SPARK_TEST_ROOT/$TEST_NAME.XXXXXX")
WAIT_TIMEOUT=${WAIT_TIMEOUT:-10} # seconds, for wait_for

_checks=0 _failed=0 _skipped=
declare -A _daemon_pid=()
_daemon_order=()
_exit_hooks=()
_unit_patterns=()
PORTS_GIVEN_FILE=$TEST_TMPDIR/ports-given
# shellcheck source=tests/harness/free-port.sh
. "$HARNESS_DIR/free-port.sh"

echo "# $TEST_NAME (temp dir $TEST_TMPDIR)"

# --- checks -------------------------------------------------------------------

pass() {
        _checks=$((_checks + 1))
        echo "ok $_checks - $*"
}

fail() {
        _checks=$((_checks + 1))
        _failed=$((_failed + 1))
        echo "not ok $_checks - $*"
}

# check DESCRIPTION CMD [ARG...]: one check that CMD succeeds.  CMD may be a
# shell function.  Its output goes where it would anyway.
check() {
        local what=$1
        shift
        if "$@"; then pass "$what"; else fail "$what"; fi
}

# check_fails DESCRIPTION CMD [ARG...]: one check that CMD fails.
check_fails() {
        local what=$1
        shift
        if "$@"; then fail "$what"; else pass "$what"; fi
}

# check_eq DESCRIPTION EXPECTED ACTUAL
check_eq() {
        if [ "$2" = "$3" ]; then
                pass "$1"
        else
                fail "$1"
                echo "#   expected: $2"
                echo "#   actual:   $3"
        fi
}

# check_match DESCRIPTION EXTENDED-REGEX TEXT
check_match() {
        if grep -Eq -- "$2" <<<"$3"; then
                pass "$1"
        else
                fail "$1"
                echo "#   pattern: $2"
                printf '%s\n' "$3" | head -n 20 | sed 's/^/#   text: /'
        fi
}

# skip_all REASON: the test cannot run here (exit 77).  For missing optional
# machinery only, never for a feature that should work.
skip_all() {
        echo "# SKIP $*"
        _skipped=$*
        exit 77
}

# die MESSAGE: a setup step failed; counts as a failed check and ends the test.
die() {
        fail "$*"
        exit 1
}

# --- temp files, ports, waiting -------------------------------------------------

harness_tmpdir() {
        echo "$TEST_TMPDIR"
}

# free_ports N: N free ports of their own on one line, or nothing if there
# are not as many:
#   read -r port eport < <(free_ports 2) || die "no free port"
free_ports() {
        local ports=() port i
        for ((i = 0; i < $1; i++)); do
                port=$(free_port) || return 1
                ports+=("$port")
        done
        echo "${ports[*]}"
}

# wait_until TIMEOUT_S CMD [ARG...]: poll CMD (also a shell function) until it
# succeeds; fails after TIMEOUT_S seconds (fractions allowed).
wait_until() {
        local timeout=$1 sec frac deadline now
        shift
        sec=${timeout%%.*}
        frac=
        [[ $timeout == *.* ]] && frac=${timeout#*.}
        frac=${frac}000000000
        deadline=$(($(date +%s%N) + ${sec:-0} * 1000000000 + 10#${frac:0:9}))
        while :; do
                "$@" && return 0
                now=$(date +%s%N)
                [ "$now" -lt "$deadline" ] || return 1
                sleep 0.05
        done
}

# wait_for CMD [ARG...]: wait_until $WAIT_TIMEOUT CMD...
wait_for() {
        wait_until "$WAIT_TIMEOUT" "$@"
}

# quietly CMD...: CMD with its output thrown away (for check and wait_for).
quietly() {
        "$@" >/dev/null 2>&1
}

# --- daemons ----------------------------------------------------------------------

# start_daemon NAME CMD [ARG...]: start CMD in the background, stdin from
# /dev/null, stdout+stderr to $(daemon_log NAME).  Stopped by stop_daemons
# and on exit.
start_daemon() {
        local name=$1
        shift
        [ -z "${_daemon_pid[$name]:-}" ] || die "start_daemon: $name already started"
        "$@" </dev/null >"$TEST_TMPDIR/$name.log" 2>&1 &
        _daemon_pid[$name]=$!
        _daemon_order+=("$name")
        echo "# started $name (pid $!): $*"
}

daemon_pid() {
        echo "${_daemon_pid[$1]:-}"
}

daemon_log() {
        echo "$TEST_TMPDIR/$1.log"
}

# message_id NAME: the MESSAGE_ID of SPARK_MESSAGE_NAME (common/log.h), which
# the daemons also print on stderr, as "[id=... app=... executor=N ...]".
message_id() {
        sed -n "s/^#define SPARK_MESSAGE_$1 *\"\([0-9a-f]*\)\".*/\1/p" "$SPARK_SRC/common/log.h"
}

# logged NAME DAEMON [FIELD=VALUE...]: how many lines DAEMON logged with the
# MESSAGE_ID NAME and each FIELD=VALUE among its log fields (app, executor,
# worker, job, peer): tests match what a line means, not its wording.
logged() {
        local id
        id=$(message_id "$1") && [ -n "$id" ] || die "logged: no SPARK_MESSAGE_$1 in common/log.h"
        shift
        local daemon=$1
        shift
        awk -v want="id=$id $*" '
                BEGIN { n = split(want, fields, " ") }
                /\[id=[0-9a-f]+[] ]/ {
                        ctx = $0; sub(/.*\[/, " ", ctx); sub(/\]$/, " ", ctx)
                        for (i = 1; i <= n; i++) if (index(ctx, " " fields[i] " ") == 0) next
                        count++
                }
                END { print count + 0 }' "$(daemon_log "$daemon")"
}

# --- a real cluster: a master, N workers and drivers -----------------------------

# require_real_cluster: the user manager and the programs real_cluster and
# real_driver_conf run, and jq, which the tests that use them read status with.
require_real_cluster() {
        require_user_manager
        require_programs sparkctl spark-master spark-worker spark-driver spark-executor
        command -v jq >/dev/null || skip_all "jq is not installed"
}

# real_cluster WORKERS [OPTION...]: a master and WORKERS real workers on ipc
# sockets in $TEST_TMPDIR, started and waited for (the master answers, every
# worker has registered).  The workers start the real spark-executor on the
# user manager.  Writes cluster.conf (the cluster and the master, with
# state_dir "state" and no HTTP) and worker1.conf ... workerN.conf, which
# include it; starts daemons "master" and "worker1" ... "workerN"; exports
# SPARK_MASTER_URL.  Options:
#   --master SETTINGS     more master settings ('scheduling = "fair";')
#   --cores N             each worker's cores (2)
#   --memory-mb N         each worker's memory (2048)
#   --heartbeat-ms N      each worker's heartbeat_ms (300)
real_cluster() {
        local n=$1 master="" cores=2 memory=2048 heartbeat=300 i t=$TEST_TMPDIR
        shift
        while [ $# -gt 0 ]; do
                case $1 in
                --master) master=$2 ;;
                --cores) cores=$2 ;;
                --memory-mb) memory=$2 ;;
                --heartbeat-ms) heartbeat=$2 ;;
                *) die "real_cluster: unknown option $1" ;;
                esac
                shift 2
        done
        export SPARK_MASTER_URL=ipc://$t/master.sock
        cat >"$t/cluster.conf" <<CONF
cluster: { master = "$SPARK_MASTER_URL"; master_events = "ipc://$t/master-events.sock"; };
master: { listen = "$SPARK_MASTER_URL"; events_listen = "ipc://$t/master-events.sock"; state_dir = "$t/state";
          http_listen = ""; $master };
CONF
        for ((i = 1; i <= n; i++)); do
                cat >"$t/worker$i.conf" <<CONF
@include "cluster.conf"
worker: { listen = "ipc://$t/worker$i.sock"; events_listen = "ipc://$t/worker$i-events.sock"; http_listen = "";
          cores = $cores; memory_mb = $memory; systemd_bus = "user"; work_dir = "$t/work$i"; heartbeat_ms = $heartbeat;
          executor_binary = "$SPARK_BUILD/spark-executor"; executor_slice = "spark-test.slice"; };
CONF
        done
        start_daemon master "$SPARK_BUILD/spark-master" --config "$t/cluster.conf"
        check "the master answers" wait_for quietly "$SPARK_BUILD/sparkctl" status
        for ((i = 1; i <= n; i++)); do
                start_daemon "worker$i" "$SPARK_BUILD/spark-worker" --config "$t/worker$i.conf"
        done
        check "$n worker(s) register" wait_for workers_registered "$n"
}

# workers_registered N: the master at $SPARK_MASTER_URL lists N workers.
workers_registered() {
        [ "$("$SPARK_BUILD/sparkctl" status --json 2>/dev/null |
                python3 -c 'import json, sys; print(len(json.load(sys.stdin)["workers"]))')" = "$1" ]
}

# real_driver_conf NAME [--state-dir] SETTINGS: $TEST_TMPDIR/driver-NAME.conf,
# which includes cluster.conf (real_cluster) and gives a driver of the
# application NAME listening on $(driver_url NAME), with no HTTP and
# SETTINGS; with --state-dir, its state_dir is driver-NAME-state.
real_driver_conf() {
        local name=$1 state="" t=$TEST_TMPDIR
        shift
        if [ "${1:-}" = --state-dir ]; then
                state="state_dir = \"$t/driver-$name-state\"; "
                shift
        fi
        cat >"$t/driver-$name.conf" <<CONF
@include "cluster.conf"
driver: { app_name = "$name"; listen = "$(driver_url "$name")"; events_listen = "ipc://$t/driver-$name-events.sock";
          http_listen = ""; $state$1 };
CONF
}

# sparkctl_driver_conf NAME SETTINGS: real_driver_conf NAME SETTINGS, with
# SPARK_DRIVER_URL exported as its url: sparkctl's job commands go to it.
sparkctl_driver_conf() {
        SPARK_DRIVER_URL=$(driver_url "$1")
        export SPARK_DRIVER_URL
        real_driver_conf "$@"
}

# restart_driver_conf NAME [--state-dir]: real_driver_conf NAME for a test
# that restarts a daemon under a job: one-core executors of 256 MB, which
# the driver declares lost only after 5 s without a heartbeat.
restart_driver_conf() {
        real_driver_conf "$@" 'cores_per_executor = 1; executor_memory_mb = 256; executor_heartbeat_timeout_ms = 5000;'
}

# driver_url NAME: where the driver of real_driver_conf NAME listens.
driver_url() {
        echo "ipc://$TEST_TMPDIR/driver-$1.sock"
}

# start_real_driver NAME [DAEMON]: start the driver of real_driver_conf NAME
# as the daemon DAEMON ("driverNAME" by default).
start_real_driver() {
        start_daemon "${2:-driver$1}" "$SPARK_BUILD/spark-driver" --config "$TEST_TMPDIR/driver-$1.conf"
}

# executor_unit_pids: "UNIT PID" of every active executor unit, sorted.
executor_unit_pids() {
        local u
        for u in $(systemctl --user list-units --no-legend --plain 'spark-executor-*' | awk '$3 == "active" { print $1 }' | sort); do
                echo "$u $(systemctl --user show -p MainPID --value "$u")"
        done
}

# executor_units_running N: at least N executor units are active.
executor_units_running() {
        [ "$(executor_unit_pids | wc -l)" -ge "$1" ]
}

# require_task_lib: sets lib, the test helpers' task library (slow_square,
# ...), or dies if it is not built.
require_task_lib() {
        lib=$SPARK_BUILD/tests/helpers/tasks/spark-driver-tasks.so
        [ -f "$lib" ] || die "$lib is not built (make test-helpers)"
}

# square_inputs N: $TEST_TMPDIR/numbers, the inputs 0 ... N-1 of a job of
# square or slow_square, and $TEST_TMPDIR/squares, their results in order.
square_inputs() {
        seq 0 $(($1 - 1)) >"$TEST_TMPDIR/numbers"
        seq 0 $(($1 - 1)) | awk '{ print $1 * $1 }' >"$TEST_TMPDIR/squares"
}

# check_square_results NAME FILE: FILE, what `sparkctl results --json` gave
# for a job of slow_square over `seq 0 N-1`, holds N results, one for each
# task, each the square of its input; $TEST_TMPDIR/squares has the N squares.
check_square_results() {
        local squares=$TEST_TMPDIR/squares n
        n=$(wc -l <"$squares")
        check_eq "$1: $n results" "$n" "$(grep -c '"task":' "$2")"
        check_eq "$1: each task exactly once" "$n" "$(grep -o '"task":[0-9]*' "$2" | sort -u | wc -l)"
        check_eq "$1: every result correct" "$(cat "$squares")" \
                "$(sed -n 's/.*"output":"\([0-9]*\)\\n".*/\1/p' "$2")"
}

# executor_registered [DAEMON] N: the driver (DAEMON, "driver" by default)
# has logged that executor N registered.
executor_registered() {
        local daemon=driver
        [ $# -lt 2 ] || { daemon=$1; shift; }
        [ "$(logged EXECUTOR_REGISTERED "$daemon" executor="$1")" -ge 1 ]
}

daemon_alive() {
        local pid=${_daemon_pid[$1]:-}
        [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null
}

# stop_daemon NAME [SIGNAL]: SIGNAL (TERM) and wait up to 10 s, then KILL.
# Returns the daemon's exit status (128+N if a signal ended it).
stop_daemon() {
        local name=$1 sig=${2:-TERM} pid rc=0
        pid=${_daemon_pid[$name]:-}
        [ -n "$pid" ] || return 0
        kill -"$sig" "$pid" 2>/dev/null || true
        if ! wait_until 10 eval "! kill -0 $pid 2>/dev/null"; then
                echo "# $name (pid $pid) ignored SIG$sig for 10s; killing it"
                pkill -KILL -P "$pid" 2>/dev/null || true
                kill -KILL "$pid" 2>/dev/null || true
        fi
        wait "$pid" 2>/dev/null || rc=$?
        unset "_daemon_pid[$name]"
        return $rc
}

# stop_daemons: stop every daemon still running, most recent first.
stop_daemons() {
        local i name
        for ((i = ${#_daemon_order[@]} - 1; i >= 0; i--)); do
                name=${_daemon_order[$i]}
                [ -n "${_daemon_pid[$name]:-}" ] || continue
                stop_daemon "$name" || true
        done
}

# require_programs PATH...: each, relative to $SPARK_BUILD, must be built.
require_programs() {
        local p
        for p in "$@"; do
                [ -x "$SPARK_BUILD/$p" ] || die "no $SPARK_BUILD/$p: build it first (make all test-helpers)"
        done
}

# app_registered: the master at $SPARK_MASTER_URL lists an application.
app_registered() {
        "$SPARK_BUILD/sparkctl" status --json 2>/dev/null |
                python3 -c 'import json, sys; sys.exit(0 if json.load(sys.stdin)["apps"] else 1)'
}

# --- the user manager -------------------------------------------------------------

# require_user_manager: the test needs the harness's systemd user manager.
# require_zookeeper: the suite's ZooKeeper ensemble (tests/harness/zk.sh,
# started by tests/run-integration.sh for the tests that call this), else
# skip.  Sets ZK_TEST_DIR, a zookeeper_dir of this test's own.
require_zookeeper() {
        [ -n "${ZK_CONNECT:-}" ] || skip_all "no ZooKeeper ensemble (ZK_CONNECT): run through tests/run-integration.sh"
        ZK_TEST_DIR=/spark-test/$TEST_NAME-$$-$RANDOM
        export ZK_TEST_DIR
}

require_user_manager() {
        [ -n "${XDG_RUNTIME_DIR:-}" ] || die "XDG_RUNTIME_DIR is not set: run through tests/run-integration.sh"
        local s
        s=$(systemctl --user show -p SystemState --value 2>&1) ||
                die "the user manager does not answer: $s"
        case $s in
        running|degraded) ;;
        *) die "the user manager is '$s'" ;;
        esac
}

# stop_user_units PATTERN...: stop units of the user manager matching the
# glob PATTERNs (e.g. 'spark-executor-*') and forget failed ones.
stop_user_units() {
        [ -n "${XDG_RUNTIME_DIR:-}" ] || return 0
        timeout 30 systemctl --user stop "$@" >/dev/null 2>&1 || true
        timeout 10 systemctl --user reset-failed "$@" >/dev/null 2>&1 || true
}

# stop_user_units_on_exit PATTERN...: stop_user_units PATTERN... on exit.
stop_user_units_on_exit() {
        _unit_patterns+=("$@")
}

# user_units PATTERN...: names of the loaded units matching the patterns,
# one a line.
user_units() {
        systemctl --user list-units --all --plain --no-legend "$@" 2>/dev/null | awk '{ print $1 }'
}

# unit_journal PATTERN [JOURNALCTL-ARG...]: the message text of the units
# matching PATTERN (a unit name or glob), logged since this test started.
unit_journal() {
        local pattern=$1
        shift
        journalctl --no-pager -q -o cat --since "@$TEST_T0" -u "$pattern" "$@" 2>/dev/null
}

# journal_grep PATTERN REGEX: does a unit matching PATTERN log a line
# matching the extended REGEX?  Use with wait_for.
journal_grep() {
        unit_journal "$1" | grep -Eq -- "$2"
}

# --- teardown -----------------------------------------------------------------------

# on_exit CMD...: run CMD (a string, eval'ed) at teardown, last added first.
on_exit() {
        _exit_hooks+=("$*")
}

_harness_dump_logs() {
        local f executors
        for f in "$TEST_TMPDIR"/*.log; do
                [ -s "$f" ] || continue
                echo "# --- last lines of $f:"
                tail -n 30 "$f" | sed 's/^/#   /'
        done
        # the executors log to the journal, not to a file here
        executors=$(journalctl --no-pager -q -o short-precise --since "@$TEST_T0" -u 'spark-executor-*' -n 40 2>/dev/null)
        if [ -n "$executors" ]; then
                echo "# --- last lines of the executors' journal:"
                printf '%s\n' "$executors" | sed 's/^/#   /'
        fi
}

_harness_exit() {
        local rc=$? i
        trap - EXIT INT TERM
        for ((i = ${#_exit_hooks[@]} - 1; i >= 0; i--)); do
                eval "${_exit_hooks[$i]}" || true
        done
        stop_daemons
        [ ${#_unit_patterns[@]} -eq 0 ] || stop_user_units "${_unit_patterns[@]}"

        if [ -n "$_skipped" ]; then
                rm -rf "$TEST_TMPDIR"
                exit 77
        fi
        if [ $rc -ne 0 ] && [ $_failed -eq 0 ]; then
                fail "the test script ended with status $rc"
        fi
        if [ $_checks -eq 0 ]; then
                fail "the test ran no checks"
        fi
        echo "# $TEST_NAME: $((_checks - _failed)) of $_checks checks passed"
        if [ $_failed -gt 0 ]; then
                _harness_dump_logs
                echo "# kept $TEST_TMPDIR"
                exit 1
        fi
        if [ "${SPARK_TEST_KEEP:-0}" = 1 ]; then
                echo "# kept $TEST_TMPDIR"
        else
                rm -rf "$TEST_TMPDIR"
        fi
        exit 0
}

_harness_signal() {
        fail "interrupted by SIG$1"
        exit $((128 + $2))
}

trap _harness_exit EXIT
trap '_harness_signal INT 2' INT
trap '_harness_signal TERM 15' TERM
