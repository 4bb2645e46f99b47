#!/usr/bin/env bash
# Roles on a TLS cluster (docs/security.md): a master (run as a unit of the
# test manager, so that its journal lines can be matched by field), a
# worker and a driver, each with a certificate of its role from spark-tls.
# Each refusal is answered EPERM, printed by sparkctl (exit 1) and logged
# by the daemon with the peer's subject and MESSAGE_ID; the permitted
# requests work, and the requests that change state are in the journal
# with SPARK_PEER=.
# shellcheck source=tests/harness/lib.sh
. "$(dirname "$0")/../harness/lib.sh"
require_user_manager
for p in openssl python3 journalctl systemd-run; do
        command -v $p >/dev/null || die "$p is not installed (.ci/run installs it)"
done

tmp=$(harness_tmpdir)
tls=$tmp/tls
other=$tmp/other
refused_id=f84ae17c40cb4abbb33a6b1871b84391

# --- certificates ----------------------------------------------------------------
spark_tls() { "$SPARK_SRC/tools/spark-tls" "$@" >/dev/null; }
spark_tls ca "$tls" || die "spark-tls cannot make a CA"
for c in "master master" "worker worker" "driver driver-a" "driver driver-b" "client alice" "admin ops"; do
        # shellcheck disable=SC2086
        set -- $c
        spark_tls "$1" "$tls" "$2" 127.0.0.1 || die "spark-tls cannot make the $1 certificate $2"
done
{ spark_tls ca "$other" && spark_tls client "$other" mallory 127.0.0.1; } || die "cannot make the other CA's certificate"
# a certificate of the cluster CA that carries no role
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$tmp/norole.key" \
        -out "$tmp/norole.csr" -subj "/O=spark-deploy/CN=nobody" 2>/dev/null &&
        openssl x509 -req -in "$tmp/norole.csr" -CA "$tls/ca.pem" -CAkey "$tls/ca.key" -CAcreateserial \
                -days 2 -out "$tmp/norole.pem" 2>/dev/null || die "cannot make a certificate without a role"

# --- the cluster -----------------------------------------------------------------
read -r master_port events_port driver_port driver_events_port executor_port < <(free_ports 5) || die "no free port"
master_url=tls+tcp://127.0.0.1:$master_port
driver_url=tls+tcp://127.0.0.1:$driver_port
cluster_with() {
        cat <<EOF
cluster: { master = "$master_url"; master_events = "tls+tcp://127.0.0.1:$events_port";
           tls_ca_file = "$tls/ca.pem"; tls_cert_file = "$1.pem"; tls_key_file = "$1.key"; };
EOF
}
cat >"$tmp/daemons.conf" <<EOF
master: { listen = "$master_url"; events_listen = "tls+tcp://127.0.0.1:$events_port";
          state_dir = "$tmp/state"; worker_timeout_ms = 3000; };
driver: { app_name = "roles-test"; listen = "$driver_url"; events_listen = "tls+tcp://127.0.0.1:$driver_events_port";
          executor_listen = "tls+tcp://127.0.0.1:$executor_port";
          advertise_host = "127.0.0.1"; cores_per_executor = 1; executor_memory_mb = 256; locality_wait_ms = 0; };
EOF
worker_conf() { # NAME CERT
        local port eport
        read -r port eport < <(free_ports 2) || die "no free port"
        {
                cluster_with "$2"
                cat <<EOF
worker: { listen = "tls+tcp://127.0.0.1:$port"; events_listen = "tls+tcp://127.0.0.1:$eport";
          advertise_host = "127.0.0.1"; cores = 2; memory_mb = 2048; systemd_bus = "user"; work_dir = "$tmp/work-$1";
          heartbeat_ms = 500; executor_binary = "$SPARK_BUILD/spark-executor"; executor_slice = "spark-test.slice"; };
EOF
        } >"$tmp/$1.conf"
}
{ cluster_with "$tls/master"; cat "$tmp/daemons.conf"; } >"$tmp/master.conf"
{ cluster_with "$tls/driver-a"; cat "$tmp/daemons.conf"; } >"$tmp/driver.conf"
worker_conf worker "$tls/worker"
worker_conf intruder "$tls/alice" # a client's certificate posing as a worker
cluster_with "$tls/alice" >"$tmp/cluster.conf" # sparkctl's default: the client alice

master_unit=spark-roles-master-$$
stop_user_units_on_exit "spark-roles-master-*" 'spark-executor-*'
systemd-run --user --quiet --unit="$master_unit" -p Type=exec \
        "$SPARK_BUILD/spark-master" --config "$tmp/master.conf" || die "cannot start the master unit"
master_journal() { journalctl --no-pager -q -o cat --since "@$TEST_T0" -u "$master_unit" "$@" 2>/dev/null; }
master_journal_has() { local re=$1; shift; master_journal "$@" | grep -Eq -- "$re"; }

export SPARK_CONF_DIR=$tmp
# as NAME: sparkctl with the certificate $tls/NAME (or a path without .pem)
as() {
        local cert=$1
        shift
        case $cert in /*) ;; *) cert=$tls/$cert ;; esac
        "$SPARK_BUILD/sparkctl" --master "$master_url" --driver "$driver_url" --tls-ca "$tls/ca.pem" \
                --tls-cert "$cert.pem" --tls-key "$cert.key" "$@"
}
n_workers() { as alice status --json 2>/dev/null | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["workers"]))' 2>/dev/null; }
workers_are() { [ "$(n_workers)" = "$1" ]; }
log_has() { grep -Eq -- "$2" "$(daemon_log "$1")"; }

start_daemon worker "$SPARK_BUILD/spark-worker" --config "$tmp/worker.conf"
check "a worker with a worker certificate registers" wait_for workers_are 1
start_daemon driver "$SPARK_BUILD/spark-driver" --config "$tmp/driver.conf"
check "a driver with a driver certificate registers its app" wait_until 30 executor_registered 2
app=$(as alice status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["apps"][0]["app_id"])')
[ -n "$app" ] || die "no application id"

# --- refusals ------------------------------------------------------------------------
# refused NAME REGEX CERT SPARKCTL-ARG...: sparkctl exits 1 and prints REGEX.
refused() {
        local name=$1 pattern=$2 rc=0 out
        shift 2
        out=$(as "$@" 2>&1) || rc=$?
        check_eq "$name: sparkctl exits 1" 1 "$rc"
        check_match "$name: ... and prints why" "$pattern" "$out"
}
refused "a client kills an app" \
        "KillApplication needs role admin; you are client \(O=spark-deploy, OU=client, CN=alice\)" \
        alice kill-app "$app"
check "... the master logs it with MESSAGE_ID and the subject" wait_for master_journal_has \
        "Refused kill_application from O=spark-deploy, OU=client, CN=alice" MESSAGE_ID=$refused_id
check "... and SPARK_PEER=" wait_for master_journal_has "Refused kill_application" \
        "SPARK_PEER=O=spark-deploy, OU=client, CN=alice"
refused "a worker submits a job" "SubmitJob needs role client or admin; you are worker" \
        worker submit --command 'echo {}' --count 1
check "... the driver logs it" log_has driver "Refused submit_job from O=spark-deploy, OU=worker, CN=worker"
refused "a client kills an executor" "KillExecutor needs role driver or admin; you are client" \
        alice kill-executor "$app" 1
refused "another driver kills the app's executor" \
        "application $app belongs to another driver \(O=spark-deploy, OU=driver, CN=driver-a\); you are O=spark-deploy, OU=driver, CN=driver-b" \
        driver-b kill-executor "$app" 1
check "... the master logs it" wait_for master_journal_has "Refused kill_executor from O=spark-deploy, OU=driver, CN=driver-b" \
        MESSAGE_ID=$refused_id
refused "a driver kills an app" "KillApplication needs role admin; you are driver" driver-b kill-app "$app"
refused "a certificate without a role" "the certificate carries no role \(no OU in its subject\)" \
        "$tmp/norole" status
check "... the master logs it" wait_for master_journal_has \
        "Refused cluster_state_request from tls 127\.0\.0\.1:[0-9]+ \(no role proven\): the certificate carries no role" \
        MESSAGE_ID=$refused_id

# a client's certificate in a worker: never joins, and the master says why
start_daemon intruder "$SPARK_BUILD/spark-worker" --config "$tmp/intruder.conf"
check "a worker with a client certificate is refused" wait_for master_journal_has \
        "Refused register_worker from O=spark-deploy, OU=client, CN=alice: RegisterWorker needs role worker; you are client" \
        MESSAGE_ID=$refused_id
check_eq "... and never joins" 1 "$(n_workers)"
stop_daemon intruder

# outside the CA: the handshake fails before any role (exit 3)
rc=0
out=$("$SPARK_BUILD/sparkctl" --master "$master_url" --tls-ca "$tls/ca.pem" status 2>&1) || rc=$?
check_eq "no client certificate: sparkctl exits 3" 3 "$rc"
check_match "... the TLS handshake failed" "the TLS handshake failed" "$out"
rc=0
out=$(as "$other/mallory" status 2>&1) || rc=$?
check_eq "a certificate of another CA: sparkctl exits 3" 3 "$rc"
check_match "... the TLS handshake failed" "the TLS handshake failed" "$out"

# --- what is permitted ----------------------------------------------------------------
rc=0
out=$(as alice submit --command 'echo role-{}' --count 2 --arg ok 2>&1) || rc=$?
check_eq "a client submits a job" 0 "$rc"
check_eq "... and gets its output" "$(printf 'role-ok\nrole-ok')" "$out"
check "... the driver logs who submitted it" log_has driver "submitted by O=spark-deploy, OU=client, CN=alice"
check "a worker reads the cluster state" quietly as worker status
check "the admin lists the jobs" quietly as ops jobs
check "the app's own driver registered it (SPARK_PEER= in the journal)" wait_for master_journal_has \
        "register_application from O=spark-deploy, OU=driver, CN=driver-a" \
        "SPARK_PEER=O=spark-deploy, OU=driver, CN=driver-a"
check "the admin kills the app" as ops kill-app "$app"
check "... the journal names the admin" wait_for master_journal_has "kill_application from O=spark-deploy, OU=admin, CN=ops" \
        "SPARK_PEER=O=spark-deploy, OU=admin, CN=ops"
app_gone() {
        as ops status --json | APP=$app python3 -c 'import json, os, sys
sys.exit(any(a["app_id"] == os.environ["APP"] and a["state"] == "running" for a in json.load(sys.stdin)["apps"]))'
}
check "... and it is no longer running" wait_for app_gone
