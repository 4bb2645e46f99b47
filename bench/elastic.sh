# shellcheck shell=bash
# The elastic rows of bench/run.sh (docs/elastic.md), sourced by it: a
# driver with dynamic_allocation and min_executors = 0 on the bench's
# cluster.  Each of ELASTIC_TRIALS trials, with the app idle at 0 executors
# and no executor unit left, after a pause:
#  - job submitted → its first task running: `sparkctl submit` of one
#    command task `bench-tool now`, whose output is CLOCK_MONOTONIC as the
#    task runs in the executor the job made the driver ask for; against the
#    run's raw StartTransientUnit with the executor's full property set
#    after a pause (R[unit_exec_p50]).  Goal ≤ 2.5×.
#  - idle release: that task's stamp → the driver's "Executor N idle for
#    … ms: released" line, against executor_idle_timeout_ms.  Goal ≤ 1.1×.

ELASTIC_TRIALS=5
ELASTIC_IDLE_MS=1000       # driver.executor_idle_timeout_ms
ELASTIC_FIRST_MS=() ELASTIC_RELEASE_MS=()

start_elastic_driver() {
        local name tls_lines=''
        DRIVER_N=$((DRIVER_N + 1))
        name=driver$DRIVER_N
        DRIVER_URL=$(url $((base + 20 + 2 * DRIVER_N)))
        [ "$TLS" = 1 ] && tls_lines="executor_listen = \"$(url $((base + 59 + DRIVER_N)))\"; advertise_host = \"127.0.0.1\";
          $(tls_keys driver)"
        cat >"$tmp/$name.conf" <<EOF
@include "cluster.conf"
driver: { app_name = "bench-$name"; listen = "$DRIVER_URL"; events_listen = "$(url $((base + 21 + 2 * DRIVER_N)))";
          cores_per_executor = 1; executor_memory_mb = 256; locality_wait_ms = 0;
          dynamic_allocation = true; min_executors = 0; executor_idle_timeout_ms = $ELASTIC_IDLE_MS;
          backlog_timeout_ms = 1000; $tls_lines };
EOF
        start_daemon "$name" "$B/spark-driver" --config "$tmp/$name.conf"
        DRIVER=$name
        wait_log "$tmp/master.log" "Application .* \\(bench-$name\\) registered" 0 20 ||
                { say "$name: the master did not register its application"; return 1; }
}

# elastic_idle: no executor unit left (the app released them all).
elastic_idle() {
        for _ in $(seq 600); do
                [ "$(executor_units)" -eq 0 ] && return 0
                sleep 0.01
        done
        return 1
}

measure_elastic() {
        local trial t0 t_task t_rel out
        start_elastic_driver || return 1
        for trial in $(seq "$ELASTIC_TRIALS"); do
                elastic_idle || { say "  executor units left while the app is idle"; return 1; }
                sleep 0.25 # a pause, as the baseline's starts have
                t0=$("$BT/bench-tool" now)
                out=$("${CLIENT_ENV[@]}" "$B/sparkctl" --driver "$DRIVER_URL" submit --name "elastic-$trial" \
                        --command "$BT/bench-tool now" --count 1 2>>"$tmp/elastic-job.log") ||
                        { say "  the elastic job failed"; return 1; }
                t_task=$(tr -dc '0-9' <<<"$out")
                [ -n "$t_task" ] || { say "  no stamp from the elastic job"; return 1; }
                ELASTIC_FIRST_MS+=("$(ms_between "$t0" "$t_task" 2)")
                wait_log "$tmp/$DRIVER.log" "Executor [0-9]+ idle for [0-9]+ ms: released" "$t_task" 30 ||
                        { say "  the idle executor was not released"; return 1; }
                t_rel=$FOUND
                ELASTIC_RELEASE_MS+=("$(ms_between "$t_task" "$t_rel" 1)")
        done
        R[elastic_first_p50]=$(printf '%s\n' "${ELASTIC_FIRST_MS[@]}" | median)
        R[elastic_first_max]=$(printf '%s\n' "${ELASTIC_FIRST_MS[@]}" | percentile 100)
        R[elastic_release_p50]=$(printf '%s\n' "${ELASTIC_RELEASE_MS[@]}" | median)
        R[elastic_release_max]=$(printf '%s\n' "${ELASTIC_RELEASE_MS[@]}" | percentile 100)
        say "  elastic: job → first task ${ELASTIC_FIRST_MS[*]} ms; idle release ${ELASTIC_RELEASE_MS[*]} ms" \
                "(idle timeout $ELASTIC_IDLE_MS ms)"
}

# The table's rows (called by build_table).
elastic_rows() {
        local r
        [ -n "${R[elastic_first_p50]:-}" ] || return 0
        r=$(ratio "${R[elastic_first_p50]:-}" "$(ms "${R[unit_exec_p50]:-}")")
        row "Elastic: an idle app with 0 executors, job submitted → first task running, p50 of ${#ELASTIC_FIRST_MS[@]} (worst $(fmt "${R[elastic_first_max]:-}" 2) ms)" \
                "$(fmt "${R[elastic_first_p50]:-}" 2) ms" \
                "raw StartTransientUnit → first instruction, the executor's full property set, after a pause: $(fmt "$(ms "${R[unit_exec_p50]:-}")" 2) ms" \
                "$r" "≤ 2.5×" "$(verdict "$r" le 2.5)"
        r=$(ratio "${R[elastic_release_max]:-}" "$ELASTIC_IDLE_MS")
        row "Elastic: last task → its idle executor released, worst of ${#ELASTIC_RELEASE_MS[@]} (median $(fmt "${R[elastic_release_p50]:-}") ms)" \
                "$(fmt "${R[elastic_release_max]:-}") ms" "executor_idle_timeout_ms: $(fmt "$ELASTIC_IDLE_MS")" "$r" "≤ 1.1×" \
                "$(verdict "$r" le 1.1)"
}
