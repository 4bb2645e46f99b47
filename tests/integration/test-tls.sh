#!/usr/bin/env bash
# Mutual TLS (docs/DESIGN.md §9): a master, two workers (executors on the user
# manager) and a driver, every endpoint tls+tcp:// with certificates made by
# tools/spark-tls, one with its role for each daemon and a client one
# for sparkctl.  A job runs through sparkctl over TLS; then clients
# without a certificate, with a self-signed one, with one from another CA,
# trusting another CA, and speaking plain tcp:// are refused (sparkctl exit
# 3, a clear message), the daemon that refused says so in its log, and a
# worker whose certificate is not from the cluster CA never joins.
# shellcheck source=tests/harness/lib.sh
. "$(dirname "$0")/../harness/lib.sh"
require_user_manager
command -v openssl >/dev/null || die "openssl is not installed (.ci/run installs it)"

tmp=$(harness_tmpdir)
lib=$SPARK_BUILD/tests/helpers/tasks/spark-driver-tasks.so
[ -f "$lib" ] || die "$lib is not built (make test-helpers)"
tls=$tmp/tls
other=$tmp/other

# --- certificates ------------------------------------------------------------
spark_tls() { "$SPARK_SRC/tools/spark-tls" "$@"; }
check "spark-tls makes a CA" spark_tls ca "$tls"
for role in master worker driver client; do
        check "... and a $role certificate signed by it" spark_tls $role "$tls" $role 127.0.0.1
done
check "... which openssl verifies against the CA" openssl verify -CAfile "$tls/ca.pem" "$tls/worker.pem"
check_match "... whose subject names its role" "O ?= ?spark-deploy, OU ?= ?worker, CN ?= ?worker" \
        "$(openssl x509 -in "$tls/worker.pem" -noout -subject)"
check_eq "the key is private" 600 "$(stat -c %a "$tls/worker.key")"
# the CA's signature is checked in every handshake: RSA's is cheap to check
# (docs/security.md, "Costs"), a daemon's own key stays P-256
check_match "the CA's key is RSA 3072" "Private-Key: \(3072 bit" "$(openssl pkey -in "$tls/ca.key" -noout -text)"
check_match "a daemon's key is P-256" "NIST CURVE: P-256" "$(openssl pkey -in "$tls/worker.key" -noout -text)"
check_eq "--days sets the validity" "$(date -u -d '+3 days' +%Y-%m-%d)" \
        "$(spark_tls --days 3 admin "$tls" admin >/dev/null &&
                date -u -d "$(openssl x509 -in "$tls/admin.pem" -noout -enddate | cut -d= -f2)" +%Y-%m-%d)"
rc=0
out=$(spark_tls host "$tls" old-style 2>&1) || rc=$?
check_eq "the old 'host' command is refused (exit 1)" 1 "$rc"
check_match "... naming the role commands" "master\|worker\|driver .*client\|admin" "$out"
if ! { spark_tls ca "$other" && spark_tls worker "$other" worker 127.0.0.1 &&
        spark_tls client "$other" client 127.0.0.1; } >/dev/null; then
        die "cannot make the other CA's certificates"
fi
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -keyout "$tmp/self.key" \
        -out "$tmp/self.pem" -subj "/CN=127.0.0.1" -addext "subjectAltName=DNS:127.0.0.1,IP:127.0.0.1" 2>/dev/null ||
        die "cannot make a self-signed certificate"

# --- the cluster ---------------------------------------------------------------
read -r master_port events_port driver_port driver_events_port exec_port http_port < <(free_ports 6) ||
        die "no free port"
master_url=tls+tcp://127.0.0.1:$master_port
driver_url=tls+tcp://127.0.0.1:$driver_port
# One cluster.conf for the host: the CA and a client certificate for
# sparkctl in the cluster section, and each daemon's own certificate in its
# section (master.tls_cert_file, ...), as on a host that runs all three.
# own_tls DIR NAME: a section's tls_cert_file and tls_key_file.
own_tls() { echo "tls_cert_file = \"$1/$2.pem\"; tls_key_file = \"$1/$2.key\";"; }
exec_url=tls+tcp://127.0.0.1:$exec_port
cat >"$tmp/cluster.conf" <<EOF
cluster: { master = "$master_url"; master_events = "tls+tcp://127.0.0.1:$events_port";
           tls_ca_file = "$tls/ca.pem"; tls_cert_file = "$tls/client.pem"; tls_key_file = "$tls/client.key"; };
master: { listen = "$master_url"; events_listen = "tls+tcp://127.0.0.1:$events_port";
          state_dir = "$tmp/state"; worker_timeout_ms = 3000; $(own_tls "$tls" master)
          http_listen = "127.0.0.1:$http_port"; };
driver: { app_name = "tls-test"; listen = "$driver_url"; events_listen = "tls+tcp://127.0.0.1:$driver_events_port";
          executor_listen = "$exec_url";
          advertise_host = "127.0.0.1"; cores_per_executor = 1; executor_memory_mb = 256; locality_wait_ms = 0;
          $(own_tls "$tls" driver) };
EOF
# worker3: a host whose certificate comes from another CA.
for i in 1 2 3; do
        read -r port eport < <(free_ports 2) || die "no free port"
        if [ $i = 3 ]; then cert=$(own_tls "$other" worker); else cert=$(own_tls "$tls" worker); fi
        cat >"$tmp/worker$i.conf" <<EOF
@include "cluster.conf"
worker: { listen = "tls+tcp://127.0.0.1:$port"; events_listen = "tls+tcp://127.0.0.1:$eport";
          advertise_host = "127.0.0.1"; cores = 2; memory_mb = 2048; systemd_bus = "user"; work_dir = "$tmp/work$i";
          heartbeat_ms = 500; executor_binary = "$SPARK_BUILD/spark-executor"; executor_slice = "spark-test.slice";
          $cert };
EOF
done
stop_user_units_on_exit 'spark-executor-*'

for f in cluster worker1 worker3; do
        check_eq "$f.conf passes --check-config" "configuration OK" \
                "$("$SPARK_BUILD/spark-master" --config "$tmp/$f.conf" --check-config 2>&1)"
done
sed "s|tls_key_file = \"$tls/master.key\"|tls_key_file = \"$tls/ca.pem\"|" "$tmp/cluster.conf" >"$tmp/badkey.conf"
rc=0
out=$("$SPARK_BUILD/spark-master" --config "$tmp/badkey.conf" --check-config 2>&1) || rc=$?
check_eq "a certificate file given as the key fails --check-config (exit 78)" 78 "$rc"
check_match "... naming the daemon's keys and the files" \
        "master\.tls_\*: the certificate .*master\.pem and the private key .*ca\.pem cannot be used together" "$out"
sed "s|tls_cert_file = \"$tls/master.pem\"; ||" "$tmp/cluster.conf" >"$tmp/nocert.conf"
rc=0
out=$("$SPARK_BUILD/spark-master" --config "$tmp/nocert.conf" --check-config 2>&1) || rc=$?
check_eq "a daemon's key without its certificate fails --check-config (exit 78)" 78 "$rc"
check_match "... naming both keys" "master\.tls_cert_file: not set, but master\.tls_key_file is" "$out"
grep -v executor_listen "$tmp/cluster.conf" >"$tmp/noexec.conf"
rc=0
out=$("$SPARK_BUILD/spark-driver" --config "$tmp/noexec.conf" --check-config 2>&1) || rc=$?
check_eq "a tls+tcp:// driver.listen without executor_listen fails --check-config (exit 78)" 78 "$rc"
check_match "... naming the key" "driver\.executor_listen: must be set: driver\.listen is a tls\+tcp:// endpoint" "$out"

# sparkctl finds cluster.conf's TLS files through $SPARK_CONF_DIR.
export SPARK_CONF_DIR=$tmp
sparkctl() { "$SPARK_BUILD/sparkctl" --master "$master_url" --driver "$driver_url" "$@"; }
n_workers() { sparkctl status --json 2>/dev/null | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["workers"]))' 2>/dev/null; }
workers_are() { [ "$(n_workers)" = "$1" ]; }
log_has() { grep -Eq -- "$2" "$(daemon_log "$1")"; }

start_daemon master "$SPARK_BUILD/spark-master" --config "$tmp/cluster.conf"
start_daemon worker1 "$SPARK_BUILD/spark-worker" --config "$tmp/worker1.conf"
start_daemon worker2 "$SPARK_BUILD/spark-worker" --config "$tmp/worker2.conf"
check "two workers register over TLS" wait_for workers_are 2
# The daemons' handshakes are our TLS engine's (common/nng-tls-engine.h),
# even though each checks its TLS files before nng has started: offered
# P-521 first, a listener still takes X25519, where nng's own engine would
# take P-521.
key_exchange() {
        openssl s_client -connect "${1#tls+tcp://}" -groups P-521:P-256:X25519 -CAfile "$tls/ca.pem" \
                -cert "$tls/client.pem" -key "$tls/client.key" </dev/null 2>&1 |
                sed -n 's/^Server Temp Key: \([^,]*\),.*/\1/p'
}
check_eq "the master's handshakes are on X25519, though P-521 is offered first" X25519 "$(key_exchange "$master_url")"
start_daemon driver "$SPARK_BUILD/spark-driver" --config "$tmp/cluster.conf"
check "the executors register with the driver over TLS" wait_until 30 executor_registered 4
check "... dialling executor_listen" log_has driver "executors dial $(sed 's/[.+]/\\&/g' <<<"$exec_url")"
check_eq "... whose handshakes are on X25519 too" X25519 "$(key_exchange "$exec_url")"

# --- executors hold no key of a cluster member -------------------------------
app=$(sed -n 's/.*Application \(app-[0-9]*-[0-9]*\) .*registered.*/\1/p' "$(daemon_log driver)" | head -n 1)
unit=spark-executor-$app-1.service
environment=$(systemctl --user show -p Environment --value "$unit")
check_match "executor 1's unit has its environment" "SPARK_EXECUTOR_ID=1" "$environment"
check "... with no TLS file, key or certificate in it" \
        bash -c "! grep -Eq 'SPARK_TLS_|\.key|\.pem|$tls' <<<'$environment'"
# (systemctl show cannot print LoadCredential=; the transient unit file says it)
credentials=$(systemctl --user cat "$unit" 2>/dev/null | grep '^LoadCredential=')
check_match "... its secret comes as a credential" "^LoadCredential=spark-executor-secret:/" "$credentials"
check_match "... and so does the CA" "^LoadCredential=spark-ca:$tls/ca\.pem" "$credentials"
check "... and no certificate or key does" bash -c "! grep -Eq '127\.0\.0\.1\.(pem|key)' <<<'$credentials'"
pid=$(systemctl --user show -p MainPID --value "$unit")
cmdline_clean() {
        local c
        c=$(tr '\0' ' ' <"/proc/$1/cmdline") || return 1
        [ -n "$c" ] && ! grep -Eq 'secrets/|\.key|\.pem' <<<"$c"
}
check "... nor the command line" cmdline_clean "$pid"
check_match "... which names the driver's task channel (from the driver, through the master)" \
        "--driver-channel-port [0-9]+" "$(tr '\0' ' ' <"/proc/$pid/cmdline")"
# registered there: the executor opened no nng (nng alone starts 13 threads),
# as no library was fetched yet (docs/spark-executor.8)
check "... and registered on it, opening no nng" test "$(ls "/proc/$pid/task" | wc -l)" -le 4
secret1=$(ls "$XDG_RUNTIME_DIR"/spark-worker/secrets/*/"$unit" 2>/dev/null | head -n 1)
check "the worker keeps executor 1's secret in a root-only file" \
        test "$(stat -c '%s %a %U' "$secret1" 2>/dev/null)" = "32 400 root"
hostile=$SPARK_BUILD/tests/helpers/hostile-client
# All an executor holds is its secret and the CA: neither opens the master.
check_match "with only the CA, registering a worker at the master fails the handshake" "^noreply " \
        "$("$hostile" --tls-ca "$tls/ca.pem" "$master_url" send register_worker worker_id=w host=h cores=64 memory_mb=64 \
                endpoint=tcp://127.0.0.1:9 2>&1)"
check_match "... and so does anything else at the driver's client endpoint" "^noreply " \
        "$("$hostile" --tls-ca "$tls/ca.pem" "$driver_url" send list_jobs 2>&1)"
check_match "on executor_listen, with only the CA, a client request is refused" \
        "^error -1 list_jobs is not an executor's request" \
        "$("$hostile" --tls-ca "$tls/ca.pem" "$exec_url" send list_jobs 2>&1)"
check_match "... and executor 1's secret does not register executor 5" \
        "^error -1 registration as executor 5 of $app refused: wrong executor secret" \
        "$("$hostile" --tls-ca "$tls/ca.pem" "$exec_url" send register_executor app_id="$app" executor_id=5 \
                host=h cores=1 worker_id=w secret=@"$secret1" 2>&1)"
check_eq "two workers still" 2 "$(n_workers)"

# --- a job over TLS -------------------------------------------------------------
square_inputs 200
rc=0
sparkctl submit --function "$lib:square" --inputs "$tmp/numbers" >"$tmp/out" 2>"$tmp/err" || rc=$?
check_eq "a function job over TLS succeeds" 0 "$rc"
check "... with every result, in order" cmp -s "$tmp/squares" "$tmp/out"
channel_port=$(sed -n 's/.*Executors poll on the task channel, port \([0-9]*\) beside .* (TLS)\..*/\1/p' \
        "$(daemon_log driver)" | head -n 1)
check "the driver's task channel is TLS" test -n "$channel_port"
# a connection that fails its handshake is closed at once: those that stay
# are executors that verified the driver's certificate
channels_up() { [ "$(ss -Htn state established "( sport = :$channel_port )" | wc -l)" -ge "$1" ]; }
check "... and the 4 executors poll on it" wait_until 10 channels_up 4
no_channel_trouble() { ! unit_journal 'spark-executor-*' | grep -q 'the task channel of driver'; }
check "... none failing to verify the driver" no_channel_trouble
rc=0
sparkctl submit --command 'echo tls-{}' --count 3 --arg ok >"$tmp/out2" 2>&1 || rc=$?
check_eq "a command job over TLS succeeds" 0 "$rc"
check_eq "... with its output" "$(printf 'tls-ok\ntls-ok\ntls-ok')" "$(cat "$tmp/out2")"

# --- a worker from another CA ----------------------------------------------------
rx() { sed 's/[][\.*^$+?(){}|]/\\&/g' <<<"$1"; } # a string as an extended regex
refusal_lines() { grep -Ec -- "Refused [0-9]+ connection\(s\) on $(rx "$1"): TLS handshake failed" "$(daemon_log "$2")"; }
more_refusals() { [ "$(refusal_lines "$1" "$2")" -gt "$3" ]; }
start_daemon worker3 "$SPARK_BUILD/spark-worker" --config "$tmp/worker3.conf"
check "the master logs refusing a worker whose certificate is from another CA" \
        wait_for more_refusals "$master_url" master 0
check "... the worker logs that its handshakes fail" \
        wait_for log_has worker3 "TLS handshake\(s\) with $(rx "$master_url") failed"
check_eq "... and it never joins" 2 "$(n_workers)"
stop_daemon worker3
check "the cluster still answers its members" sparkctl status

# --- refused clients ------------------------------------------------------------
# refused NAME EXPECTED-REGEX SPARKCTL-ARG...: sparkctl exits 3 and says why.
refused() {
        local name=$1 pattern=$2 rc=0 out
        shift 2
        out=$("$SPARK_BUILD/sparkctl" "$@" 2>&1) || rc=$?
        check_eq "$name: sparkctl exits 3" 3 "$rc"
        check_match "$name: ... and says why" "$pattern" "$out"
}
handshake='cannot reach the (master|driver) at tls\+tcp://127\.0\.0\.1:[0-9]+: the TLS handshake failed'

before=$(refusal_lines "$master_url" master)
refused "no client certificate" "$handshake" --master "$master_url" --tls-ca "$tls/ca.pem" status
# at most one report per endpoint every 10 s: the next one may wait that long
check "the master logs the refusal" wait_until 20 more_refusals "$master_url" master "$before"
refused "a self-signed certificate" "$handshake" \
        --master "$master_url" --tls-ca "$tls/ca.pem" --tls-cert "$tmp/self.pem" --tls-key "$tmp/self.key" status
refused "a certificate from another CA" "$handshake" \
        --master "$master_url" --tls-ca "$tls/ca.pem" --tls-cert "$other/client.pem" --tls-key "$other/client.key" status
refused "a server not signed by the CA we trust" "$handshake" \
        --master "$master_url" --tls-ca "$other/ca.pem" --tls-cert "$other/client.pem" --tls-key "$other/client.key" status
refused "the driver refuses a client without a certificate" "$handshake" \
        --driver "$driver_url" --tls-ca "$tls/ca.pem" jobs
check "the driver logs the refusal" wait_for more_refusals "$driver_url" driver 0
refused "plain tcp:// to a TLS endpoint" "cannot reach the master at tcp://127\.0\.0\.1:$master_port" \
        --master "tcp://127.0.0.1:$master_port" status
rc=0
out=$(SPARK_CONF_DIR=/nonexistent "$SPARK_BUILD/sparkctl" --master "$master_url" status 2>&1) || rc=$?
check_eq "no TLS settings at all: a usage error (exit 2)" 2 "$rc"
check_match "... naming what to give" "needs the cluster CA: give --tls-ca FILE" "$out"
check "members still get answers" sparkctl status

stop_daemon driver TERM
check_eq "the driver unregistered over TLS" 1 "$(logged APP_REMOVED driver app="$app")"

# The master's HTTP server follows its TLS settings: HTTPS with its own
# certificate (docs/observability.md), which the cluster CA verifies.
if command -v curl >/dev/null; then
        check_match "the master's /metrics over HTTPS, verified against the cluster CA" '^spark_workers\{state="alive"\} ' \
                "$(curl -fsS --cacert "$tls/ca.pem" "https://127.0.0.1:$http_port/metrics")"
        check_fails "... and not in plain HTTP" quietly curl -fsS --max-time 5 "http://127.0.0.1:$http_port/metrics"
        check_fails "... nor for a client that does not trust the cluster CA" \
                quietly curl -fsS --max-time 5 "https://127.0.0.1:$http_port/metrics"
fi
