#!/usr/bin/env bash
# A real Prometheus (Debian's prometheus) scrapes every daemon of a running
# cluster (docs/observability.md): its scrape config is generated for the
# master, two workers and the driver, scraping every second, with the alert
# rules of packaging/prometheus.  The test asks Prometheus's HTTP API what
# it saw: two alive workers, task counters that match the job it ran, every
# target up, the alert rules loaded, and every query of the Grafana
# dashboard valid.  Prometheus is started once, for this whole test.
# shellcheck source=tests/harness/lib.sh
. "$(dirname "$0")/../harness/lib.sh"
# shellcheck source=tests/harness/obs.sh
. "$(dirname "$0")/../harness/obs.sh"
command -v prometheus >/dev/null || skip_all "prometheus is not installed"
command -v promtool >/dev/null || skip_all "promtool is not installed"

RULES=$PWD/packaging/prometheus/spark-alerts.yml
DASHBOARD=$PWD/packaging/grafana/spark-dashboard.json
check "promtool check rules passes on the shipped alert rules" quietly promtool check rules "$RULES"

obs_cluster_start 2
check "both executors run" wait_until 30 obs_executors_running 2

port=$(free_port) || die "no free port"
PROM=http://127.0.0.1:$port
targets=
for u in "$MASTER_HTTP" "${WORKER_HTTP[@]}" "$DRIVER_HTTP"; do
        targets+="'${u#http://}', "
done
cat >"$T/prometheus.yml" <<CONF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $RULES
scrape_configs:
  - job_name: spark
    static_configs:
      - targets: [${targets%, }]
CONF
check "promtool check config passes on the generated scrape config" quietly promtool check config "$T/prometheus.yml"
start_daemon prometheus prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/prometheus-data" \
        --web.listen-address="127.0.0.1:$port" --log.level=warn
check "Prometheus is ready" wait_until 60 quietly curl -fsS "$PROM/-/ready"

# query EXPR: the values of an instant query, one per line
query() {
        curl -fsS --get --data-urlencode "query=$1" "$PROM/api/v1/query" | jq -r '.data.result[].value[1]'
}
# query_is EXPR VALUE: the query has exactly one result, VALUE
query_is() {
        [ "$(query "$1")" = "$2" ]
}

out=$("$SPARKCTL" submit --name scraped --command 'echo {#}' --count 30 2>"$T/stderr")
check_eq "a job of 30 tasks succeeds" 30 "$(grep -c . <<<"$out")"

check "every target is up" wait_until 30 query_is 'count(up{job="spark"} == 1)' 4
check 'spark_workers{state="alive"} == 2' wait_until 30 query_is 'spark_workers{state="alive"} == 2' 2
check "the task counters match the job: 30 submitted" wait_until 30 query_is 'sum(spark_tasks_submitted_total)' 30
check "... 30 succeeded" wait_until 30 query_is 'sum(spark_tasks_succeeded_total)' 30
check "... no failed attempt" query_is 'sum(spark_task_attempts_failed_total)' 0
check "... 30 task durations in the histogram" wait_until 30 query_is 'sum(spark_task_duration_seconds_count)' 30
check "the job ended, succeeded" wait_until 30 query_is 'sum(spark_jobs_ended_total{state="succeeded"})' 1
check "two executors running, by the master" query_is 'sum(spark_executors{state="running"})' 2
check "by the workers too" query_is 'sum(spark_worker_executors{state="running"})' 2
check "the executors' memory, from systemd, per executor" \
        wait_until 30 query_is 'count(spark_executor_memory_bytes > 0)' 2
check "the alert rules are loaded" \
        test "$(curl -fsS "$PROM/api/v1/rules" | jq '[.data.groups[].rules[]] | length')" -ge 8
check "no alert fires on a healthy cluster" \
        test "$(curl -fsS "$PROM/api/v1/alerts" | jq '[.data.alerts[] | select(.state == "firing")] | length')" = 0

bad=0
while IFS= read -r expr; do
        status=$(curl -fsS --get --data-urlencode "query=$expr" "$PROM/api/v1/query" | jq -r .status)
        if [ "$status" != success ]; then
                echo "# the dashboard's query fails: $expr"
                bad=$((bad + 1))
        fi
done < <(jq -r '.panels[].targets[].expr' "$DASHBOARD")
check_eq "every query of the Grafana dashboard is valid PromQL" 0 "$bad"

# a worker stops: Prometheus sees it down and the master counts it lost
stop_daemon worker2
check "the stopped worker's target is down" wait_until 30 query_is 'count(up{job="spark"} == 0)' 1
check "the master's lost-worker counter, through Prometheus" \
        wait_until 30 query_is 'sum(spark_workers_lost_total)' 1
