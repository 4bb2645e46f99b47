# shellcheck shell=bash
# The rows of bench/run.sh for standby masters (docs/ha.md), sourced by it:
# master failover, and the master scale rows in recovery mode zookeeper.
# Both phases share one ensemble, stopped by run.sh.
#
# Two masters in recovery mode zookeeper on a 3-node ensemble of our own
# (tests/harness/zk.sh, tickTime 200 ms), a worker and a driver with 2
# executors.  Each trial SIGKILLs the leader and, at the same moment, one
# executor: the standby must lead, take the worker over and place a
# replacement.  The figure is the SIGKILL → the new leader's "Launching
# executor" line; the goal is the session timeout the ensemble granted + 2 s
# (the ensemble expires the dead leader's session after that long; then the
# standby is elected, reads the state and places).  The killed master is
# started again as the next standby.

FAILOVER_TRIALS=${BENCH_FAILOVER_TRIALS:-5}
FAILOVER_MS=()
# Then as many trials that stop the leader with SIGTERM (as systemctl stop
# does: its session ends at once, the standby leads within a moment): the
# figure is the SIGTERM → the worker's registration with the new leader,
# which is how soon the worker sees that the old one is gone (docs/ha.md).
FAILOVER_STOP_MS=()
FAILOVER_HEARTBEAT_MS=200
ZK_STARTED=

# active_executor_units: the names of the active executor units.
active_executor_units() {
        systemctl --user list-units --no-legend --plain 'spark-executor-*' 2>/dev/null | awk '$3 == "active" { print $1 }'
}

failover_confs() {
        local fbase=$1 n listen events
        local m1 e1 m2 e2
        m1=$(tcp_url "$fbase") e1=$(tcp_url $((fbase + 1))) m2=$(tcp_url $((fbase + 2))) e2=$(tcp_url $((fbase + 3)))
        cat >"$tmp/fo-cluster.conf" <<EOF
cluster: { master = "$m1,$m2"; master_events = "$e1,$e2"; };
driver: { app_name = "bench-failover"; listen = "$(tcp_url $((fbase + 6)))"; events_listen = "$(tcp_url $((fbase + 7)))";
          max_cores = 2; cores_per_executor = 1; executor_memory_mb = 256; task_max_failures = 1000;
          locality_wait_ms = 0; http_listen = "127.0.0.1:$((fbase + 8))"; };
worker: { listen = "$(tcp_url $((fbase + 4)))"; events_listen = "$(tcp_url $((fbase + 5)))"; cores = 4;
          memory_mb = 4096; systemd_bus = "user"; work_dir = "$tmp/fo-work"; heartbeat_ms = $FAILOVER_HEARTBEAT_MS;
          executor_binary = "$B/spark-executor"; executor_slice = "spark-bench.slice";
          http_listen = "127.0.0.1:$((fbase + 9))"; };
EOF
        for n in 1 2; do
                if [ "$n" = 1 ]; then listen=$m1 events=$e1; else listen=$m2 events=$e2; fi
                cat >"$tmp/fo-m$n.conf" <<EOF
@include "fo-cluster.conf"
master: { listen = "$listen"; events_listen = "$events"; state_dir = "$tmp/fo-m$n-state";
          worker_timeout_ms = 5000; max_executor_retries = 10000; http_listen = "127.0.0.1:$((fbase + 10 + n))";
          recovery_mode = "zookeeper"; zookeeper = "$ZK_CONNECT"; zookeeper_dir = "/spark-bench";
          zookeeper_session_timeout_ms = 2000; };
EOF
        done
}

# stand_again MASTER T0: the failover's master MASTER, stopped at T0, started
# again: it stands for election.
stand_again() {
        start_daemon "$1" "$B/spark-master" --config "$tmp/$1.conf"
        wait_log "$tmp/$1.log" "Standing for election" "$2" 20 || { say "  $1 did not stand again"; return 1; }
}

run_failover() {
        local fbase lead stand t0 unit trial granted t
        command -v java >/dev/null && [ -e /usr/share/java/zookeeper.jar ] ||
                { note "no ZooKeeper server here (apt-get install zookeeper): the failover row is not measured"; return 0; }
        say "master failover: 2 masters on a 3-node ZooKeeper ensemble, $FAILOVER_TRIALS leader SIGKILLs"
        ZK_STARTED=1
        run_fg tests/harness/zk.sh start "$tmp/zk" >"$tmp/zk.log" 2>&1 || { say "the ZooKeeper ensemble did not start"; return 1; }
        # shellcheck disable=SC1091
        . "$tmp/zk/env"
        fbase=$(pick_port_base) || { say "no free block of ports"; return 1; }
        failover_confs "$fbase"
        start_daemon fo-m1 "$B/spark-master" --config "$tmp/fo-m1.conf"
        wait_log "$tmp/fo-m1.log" "Elected leader" 0 20 || { say "  fo-m1 was not elected"; return 1; }
        start_daemon fo-m2 "$B/spark-master" --config "$tmp/fo-m2.conf"
        wait_log "$tmp/fo-m2.log" "Standing for election" 0 20 || { say "  fo-m2 did not stand"; return 1; }
        start_daemon fo-worker "$B/spark-worker" --config "$tmp/fo-cluster.conf"
        wait_log "$tmp/fo-m1.log" "Worker .* registered" 0 20 || { say "  the worker did not register"; return 1; }
        start_daemon fo-driver "$B/spark-driver" --config "$tmp/fo-cluster.conf"
        for _ in $(seq 600); do
                [ "$(log_count "$tmp/fo-driver.log" "Executor [0-9]+ registered")" -ge 2 ] && break
                sleep 0.05
        done
        [ "$(log_count "$tmp/fo-driver.log" "Executor [0-9]+ registered")" -ge 2 ] ||
                { say "  the failover app's executors did not register"; return 1; }
        granted=$(sed -n 's/.*session timeout \([0-9]*\) ms (asked for.*/\1/p' "$tmp/fo-m1.log" | head -n 1)
        R[failover_session_ms]=${granted:-2000}
        lead=fo-m1 stand=fo-m2
        for ((trial = 1; trial <= FAILOVER_TRIALS; trial++)); do
                unit=$(active_executor_units | head -n 1)
                [ -n "$unit" ] || { say "  no running executor to kill"; return 1; }
                t0=$("$BT/bench-tool" kill 9 "${DAEMON_PID[$lead]}") || return 1
                systemctl --user kill -s KILL "$unit" >/dev/null 2>&1
                reap_daemon "$lead"
                wait_log "$tmp/$stand.log" "Launching executor " "$t0" 30 ||
                        { say "  $stand placed no replacement within 30 s"; return 1; }
                FAILOVER_MS+=("$(ms_between "$t0" "$FOUND" 1)")
                # the old leader comes back as the next standby, and the app
                # has its 2 executors again, before the next trial
                stand_again "$lead" "$t0" || return 1
                for _ in $(seq 400); do
                        [ "$(active_executor_units | grep -c .)" -ge 2 ] && break
                        sleep 0.05
                done
                t=$lead lead=$stand stand=$t
        done
        R[failover_p50]=$(printf '%s\n' "${FAILOVER_MS[@]}" | median)
        R[failover_max]=$(printf '%s\n' "${FAILOVER_MS[@]}" | percentile 100)
        say "  leader SIGKILL → replacement placed by the new leader: ${FAILOVER_MS[*]} ms (session timeout ${R[failover_session_ms]} ms)"
        for ((trial = 1; trial <= FAILOVER_TRIALS; trial++)); do
                # at a random point of the worker's heartbeat period
                sleep "0.$((RANDOM % 10))$((RANDOM % 10))"
                t0=$("$BT/bench-tool" kill 15 "${DAEMON_PID[$lead]}") || return 1
                reap_daemon "$lead"
                wait_log "$tmp/fo-worker.log" "Registered with master " "$t0" 30 ||
                        { say "  the worker did not register with $stand within 30 s"; return 1; }
                FAILOVER_STOP_MS+=("$(ms_between "$t0" "$FOUND" 1)")
                stand_again "$lead" "$t0" || return 1
                t=$lead lead=$stand stand=$t
        done
        R[failover_stop_p50]=$(printf '%s\n' "${FAILOVER_STOP_MS[@]}" | median)
        R[failover_stop_max]=$(printf '%s\n' "${FAILOVER_STOP_MS[@]}" | percentile 100)
        say "  leader SIGTERM → the worker registered with the new leader: ${FAILOVER_STOP_MS[*]} ms (heartbeat $FAILOVER_HEARTBEAT_MS ms)"
        stop_daemon fo-driver
        for t in fo-worker fo-m1 fo-m2; do stop_daemon "$t"; done
}

# The master scale run again with recovery_mode = "zookeeper" (the state in
# znodes, saved in zoo_multi batches on the state timer; a new application
# is one journal znode, created before it is answered), on the same ensemble and at the same sizes as the
# filesystem run of run_scale, for the RegisterWorker and one-executor
# placement rows beside it.  ZK_SCALE_* size it apart (default: the same).
run_scale_zk() {
        local sbase master_url events_url rc=0 workers apps execs small
        workers=${BENCH_ZK_WORKERS:-$WORKERS} apps=${BENCH_ZK_APPS:-$APPS}
        execs=${BENCH_ZK_APP_EXECUTORS:-$APP_EXECUTORS} small=${BENCH_ZK_SMALL_APPS:-$SMALL_APPS}
        command -v java >/dev/null && [ -e /usr/share/java/zookeeper.jar ] ||
                { note "no ZooKeeper server here: the zookeeper-mode scale rows are not measured"; return 0; }
        say "master scale, recovery_mode zookeeper: $workers workers, $apps apps × $execs executors, then $small apps × 1"
        if [ -z "$ZK_STARTED" ]; then
                ZK_STARTED=1
                run_fg tests/harness/zk.sh start "$tmp/zk" >"$tmp/zk.log" 2>&1 || { say "the ZooKeeper ensemble did not start"; return 1; }
        fi
        # shellcheck disable=SC1091
        . "$tmp/zk/env"
        sbase=$(pick_port_base) || { say "no free block of ports"; return 1; }
        master_url=$(tcp_url "$sbase")
        events_url=$(tcp_url $((sbase + 1)))
        scale_master_conf "$tmp/scale-zk.conf" "$master_url" "$events_url" "$tmp/scale-zk-state" $((sbase + 2)) \
                "recovery_mode = \"zookeeper\"; zookeeper = \"$ZK_CONNECT\"; zookeeper_dir = \"/spark-bench-scale\";
          zookeeper_session_timeout_ms = 4000;"
        ulimit -Hn 65536 2>/dev/null || true
        ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
        "$B/spark-master" --config "$tmp/scale-zk.conf" >"$tmp/scale-zk-master.log" 2>&1 &
        DAEMON_PID[scale-zk-master]=$!
        ALL_PIDS+=("$!")
        for _ in $(seq 200); do
                grep -q "Elected leader" "$tmp/scale-zk-master.log" 2>/dev/null && break
                sleep 0.05
        done
        grep -q "Elected leader" "$tmp/scale-zk-master.log" || { say "  the zookeeper-mode master did not lead"; return 1; }
        timeout 300 "$BT/master-load" "$master_url" "$events_url" 127.0.0.1 $((sbase + 10)) 64 \
                "${DAEMON_PID[scale-zk-master]}" "$workers" "$WORKER_CORES" "$apps" "$execs" "$small" \
                >"$tmp/scale-zk.out" 2>"$tmp/scale-zk.log" &
        LOAD_PID=$!
        wait "$LOAD_PID" || rc=$?
        LOAD_PID=
        [ $rc = 0 ] || note "master-load (zookeeper mode) exited with $rc: $(tail -n 3 "$tmp/scale-zk.log" | tr '\n' ' ')"
        stop_daemon scale-zk-master
        while read -r k v; do R[zkscale_$k]=$v; done <"$tmp/scale-zk.out"
        R[zkscale_workers_asked]=$workers
        say "  zookeeper mode: register p99 ${R[zkscale_register_us_p99]:-n/a} µs, one-executor app placed p99" \
            "${R[zkscale_small_place_us_p99]:-n/a} µs"
}
