# shellcheck shell=bash
# A real cluster with every HTTP server on (source after lib.sh), for the
# observability tests: a spark-master, NWORKERS spark-workers (2 cores each)
# that start real spark-executor units on the harness's user manager, and a
# spark-driver of one application, all on ipc:// sockets under $T, each
# daemon's http_listen on a free loopback port.
#
#   obs_cluster_start 2          # sets MASTER_HTTP, WORKER_HTTP[1..], DRIVER_HTTP
#   "$SPARKCTL" submit --command 'echo {}' --count 10

# shellcheck disable=SC2034  # used by the tests
obs_cluster_start() {
        local n=$1 i port
        T=$(harness_tmpdir)
        SPARKCTL=$SPARK_BUILD/sparkctl
        require_programs sparkctl spark-master spark-worker spark-driver spark-executor
        require_user_manager
        command -v jq >/dev/null || skip_all "jq is not installed"
        command -v curl >/dev/null || skip_all "curl is not installed"
        stop_user_units_on_exit 'spark-executor-*'
        export SPARK_MASTER_URL=ipc://$T/master.sock SPARK_DRIVER_URL=ipc://$T/driver.sock
        obs_master_conf
        start_daemon master "$SPARK_BUILD/spark-master" --config "$T/master.conf"
        wait_for quietly "$SPARKCTL" status || die "the master does not answer"
        declare -gA WORKER_HTTP=()
        for ((i = 1; i <= n; i++)); do
                port=$(free_port) || die "no free port"
                WORKER_HTTP[$i]=http://127.0.0.1:$port
                cat >"$T/worker$i.conf" <<CONF
cluster: { master = "$SPARK_MASTER_URL"; master_events = "ipc://$T/master-events.sock"; };
worker: { listen = "ipc://$T/worker$i.sock"; events_listen = "ipc://$T/worker$i-events.sock";
          advertise_host = "127.0.0.1"; cores = 2; memory_mb = 1024; systemd_bus = "user";
          work_dir = "$T/work$i"; heartbeat_ms = 300; executor_binary = "$SPARK_BUILD/spark-executor";
          executor_slice = "spark-test.slice"; http_listen = "127.0.0.1:$port"; };
CONF
                start_daemon "worker$i" "$SPARK_BUILD/spark-worker" --config "$T/worker$i.conf"
        done
        wait_for obs_workers_alive "$n" || die "the workers do not register"
        port=$(free_port) || die "no free port"
        DRIVER_HTTP=http://127.0.0.1:$port
        cat >"$T/driver.conf" <<CONF
cluster: { master = "$SPARK_MASTER_URL"; master_events = "ipc://$T/master-events.sock"; };
driver: { app_name = "observed"; listen = "$SPARK_DRIVER_URL"; events_listen = "ipc://$T/driver-events.sock";
          max_cores = $((2 * n)); cores_per_executor = 2; executor_memory_mb = 256; task_max_failures = 3;
          http_listen = "127.0.0.1:$port"; };
CONF
        start_daemon driver "$SPARK_BUILD/spark-driver" --config "$T/driver.conf"
        wait_for app_registered || die "the driver does not register its application"
        wait_for quietly "$SPARKCTL" jobs || die "the driver does not answer"
}

# obs_master_conf: $T/master.conf, a master on ipc://$T/master.sock with
# its HTTP server on a free loopback port, MASTER_HTTP.
obs_master_conf() {
        local port
        port=$(free_port) || die "no free port"
        MASTER_HTTP=http://127.0.0.1:$port
        cat >"$T/master.conf" <<CONF
cluster: { master = "ipc://$T/master.sock"; master_events = "ipc://$T/master-events.sock"; };
master: { listen = "ipc://$T/master.sock"; events_listen = "ipc://$T/master-events.sock"; state_dir = "$T/state";
          http_listen = "127.0.0.1:$port"; };
CONF
}

# obs_workers_alive N: the master lists N alive workers.
obs_workers_alive() {
        [ "$("$SPARKCTL" status --json 2>/dev/null | jq '[.workers[] | select(.state == "alive")] | length')" = "$1" ]
}

# obs_executors_running N: the master lists N running executors.
obs_executors_running() {
        [ "$("$SPARKCTL" status --json 2>/dev/null | jq '[.executors[] | select(.state == "running")] | length')" = "$1" ]
}

# obs_metric URL NAME{LABELS}: the value of one sample of URL/metrics.
obs_metric() {
        curl -fsS "$1/metrics" | awk -v k="$2" '$1 == k { print $2; found = 1 } END { exit !found }'
}
