# shellcheck shell=bash
# Helpers for bench/run.sh: daemons with time-stamped logs, waiting on log
# lines, clean-up by pid, statistics, and the results table.
#
# Every time here is CLOCK_MONOTONIC in µs, taken by bench/bench-tool
# (`now`, `kill`, and `tslog`, which stamps each line a daemon writes to
# stderr as it is read), so that a kill in this shell and a log line of a
# daemon compare directly.

# ------------------------------------------------------------------ misc

say() { printf 'bench: %s\n' "$*" >&2; }
note() { NOTES+=("$*"); say "note: $*"; }
now_us() { "$BT/bench-tool" now; }
# ms_between FROM_US TO_US DECIMALS: the milliseconds from one now_us (or
# log_time) reading to a later one.
ms_between() { awk -v a="$1" -v b="$2" -v d="$3" 'BEGIN { printf("%.*f", d, (b - a) / 1000) }'; }

# pick_port_base: a block of 100 free tcp ports on 127.0.0.1 (other test runs
# share this machine, so no fixed ports), below the ephemeral range: the
# master-scale phase opens 10,000 connections, whose local ports must not
# land on a port we mean to listen on.
pick_port_base() {
        local used base lo
        lo=$(awk '{ print $1 }' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
        used=$(ss -Htan 2>/dev/null | awk '{ n = split($4, a, ":"); print a[n] }' | sort -un)
        for _ in $(seq 50); do
                base=$(( (RANDOM % ((lo - 10100) / 100) + 100) * 100 ))
                if ! awk -v b="$base" '$1 >= b && $1 < b + 100 { found = 1 } END { exit !found }' <<<"$used"; then
                        echo "$base"
                        return 0
                fi
        done
        return 1
}

# ------------------------------------------------------------ processes

# start_daemon NAME CMD...: runs CMD in the background; its stdout and stderr
# go, time-stamped, to $tmp/NAME.log.  The pid is in DAEMON_PID[NAME].
declare -A DAEMON_PID=()
ALL_PIDS=()
start_daemon() {
        local name=$1
        shift
        "$@" > >(exec "$BT/bench-tool" tslog >>"$tmp/$name.log") 2>&1 &
        DAEMON_PID[$name]=$!
        ALL_PIDS+=("$!")
}

pid_alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }

# stop_pid PID [SIGNAL]: SIGNAL (TERM), up to 5 s, then KILL; reaps it.
stop_pid() {
        local pid=$1 sig=${2:-TERM}
        pid_alive "$pid" || { wait "$pid" 2>/dev/null || true; return 0; }
        kill -"$sig" "$pid" 2>/dev/null || true
        for _ in $(seq 100); do pid_alive "$pid" || break; sleep 0.05; done
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
}

stop_daemon() {
        local name=$1
        [ -n "${DAEMON_PID[$name]:-}" ] || return 0
        stop_pid "${DAEMON_PID[$name]}" "${2:-TERM}"
        unset "DAEMON_PID[$name]"
}

# reap_daemon NAME: waits for NAME, which was sent a signal that ends it.
reap_daemon() {
        wait "${DAEMON_PID[$1]}" 2>/dev/null || true
        unset "DAEMON_PID[$1]"
}

# ------------------------------------------------------------------ logs

# log_time FILE ERE [AFTER]: the stamp of the first line of FILE at or after
# AFTER (µs) matching ERE; nothing if there is none.
log_time() {
        [ -f "$1" ] || return 0
        awk -v re="$2" -v after="${3:-0}" '$1 >= after && $0 ~ re { print $1; exit }' "$1"
}

# wait_log FILE ERE AFTER TIMEOUT_S: waits for such a line; its stamp is left
# in FOUND.  bench-tool waitlog reads the file as it grows, without the
# processes a loop of log_time and sleep started 100 times a second (about
# a fifth of the 2 cores of the test machines, taken from the start-ups being
# measured); through run_fg, as a
# long wait inside $(...) would hold off the run's TERM trap until it ends.
FOUND=
wait_log() {
        local found=$tmp/wait-log.$BASHPID
        FOUND=
        run_fg "$BT/bench-tool" waitlog "$1" "$2" "${3:-0}" "$4" >"$found" || return 1
        read -r FOUND <"$found"
        [ -n "$FOUND" ]
}

# log_count FILE ERE [AFTER]
log_count() {
        [ -f "$1" ] || { echo 0; return; }
        awk -v re="$2" -v after="${3:-0}" '$1 >= after && $0 ~ re { n++ } END { print n + 0 }' "$1"
}

# ------------------------------------------------------------ statistics

# percentile Q: nearest-rank percentile of the numbers on stdin.
percentile() {
        sort -g | awk -v q="$1" '{ v[NR] = $1 } END {
                if (NR == 0) { print "nan"; exit }
                k = int(q / 100 * NR + 0.999999); if (k < 1) k = 1; if (k > NR) k = NR
                print v[k] }'
}

median() { percentile 50; }

# kv FILE KEY: the value of "KEY value" in FILE (the helpers' output).
kv() { awk -v k="$2" '$1 == k { print $2; exit }' "$1" 2>/dev/null; }

# fmt NUMBER DECIMALS: with thousands separators; "n/a" for an empty or
# non-numeric value.
fmt() {
        awk -v v="${1:-}" -v d="${2:-0}" 'BEGIN {
                if (v !~ /^-?[0-9.]+(e[-+]?[0-9]+)?$/) { print "n/a"; exit }
                s = sprintf("%." d "f", v); frac = ""
                if (index(s, ".")) { frac = substr(s, index(s, ".")); s = substr(s, 1, index(s, ".") - 1) }
                out = ""
                while (length(s) > 3) { out = "," substr(s, length(s) - 2) out; s = substr(s, 1, length(s) - 3) }
                print s out frac }'
}

# ratio A B: A / B with 2 decimals, or n/a.
ratio() {
        awk -v a="${1:-}" -v b="${2:-}" 'BEGIN {
                if (a !~ /^[0-9.]+$/ || b !~ /^[0-9.]+$/ || b == 0) { print "n/a"; exit }
                r = a / b
                printf(r >= 100 ? "%.0f\n" : r >= 10 ? "%.1f\n" : "%.2f\n", r) }'
}

# verdict VALUE OP LIMIT: PASS or FAIL (OP is le or ge), n/a if no value.
verdict() {
        awk -v v="${1:-}" -v op="$2" -v l="$3" 'BEGIN {
                if (v !~ /^[0-9.]+$/) { print "n/a"; exit }
                ok = op == "le" ? v + 0 <= l + 0 : v + 0 >= l + 0
                print ok ? "PASS" : "**FAIL**" }'
}

# both VERDICT VERDICT: PASS if both are, n/a if either is, else FAIL
both() {
        case "$1 $2" in
        "PASS PASS") echo PASS ;;
        *n/a*) echo n/a ;;
        *) echo '**FAIL**' ;;
        esac
}

# ----------------------------------------------------------------- table

# scale_master_conf FILE MASTER_URL EVENTS_URL STATE_DIR HTTP_PORT SETTINGS:
# the conf of the master of a scale run: workers and executors that may stay
# silent or fail as long as the run takes, HTTP on 127.0.0.1:HTTP_PORT, and
# SETTINGS (its scheduling, its recovery mode).
scale_master_conf() {
        cat >"$1" <<CONF
cluster: { master = "$2"; master_events = "$3"; };
master: { listen = "$2"; events_listen = "$3"; state_dir = "$4";
          worker_timeout_ms = 600000; max_executor_retries = 10000; http_listen = "127.0.0.1:$5";
          $6 };
CONF
}

TABLE=()
# row FIGURE OURS BASELINE RATIO GOAL VERDICT
row() {
        TABLE+=("| $1 | $2 | $3 | $4 | $5 | $6 |")
}
