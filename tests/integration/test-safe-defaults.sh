#!/usr/bin/env bash
# Safe by default: the shipped configuration listens on loopback; a
# plaintext tcp:// listen endpoint beyond loopback stops every daemon at
# --check-config and at start (exit 78, naming the file, line and key and
# both ways out) and opens no socket; with cluster.insecure = true the daemon
# starts, listens there and warns in the journal (with a MESSAGE_ID) at every
# start.  Dialing a master on another host stays allowed.
# shellcheck source=tests/harness/lib.sh
. "$(dirname "$0")/../harness/lib.sh"
require_user_manager
require_programs spark-master spark-worker spark-driver sparkctl

tmp=$(harness_tmpdir)
INSECURE_ID=60c2b902debc44b6b8a510164d1f53e1

# --- the shipped files ---------------------------------------------------------
for d in master worker driver; do
        check_eq "conf/$d.conf as shipped passes --check-config" "configuration OK" \
                "$(SPARK_CONF_DIR=$SPARK_SRC/conf "$SPARK_BUILD/spark-$d" --config "$SPARK_SRC/conf/$d.conf" --check-config 2>&1)"
done
# (an empty executor_listen means "at listen")
listens=$(grep -hE '^ *[a-z_]*listen = ' "$SPARK_SRC"/conf/*.conf | grep -v '^ *executor_listen = "";')
check_eq "every listen endpoint of conf/*.conf is on 127.0.0.1" "" \
        "$(grep -vE '^ *[a-z_]*listen = "tcp://127\.0\.0\.1:[0-9]+";' <<<"$listens")"
check_match "... and there are some" 'listen = ' "$listens"
check_match "... and insecure is false" '^ *insecure = false;' "$(cat "$SPARK_SRC/conf/cluster.conf")"

# --- plaintext beyond loopback: refused -------------------------------------------
# refused DAEMON KEY ENDPOINT: a file that sets [section] KEY = ENDPOINT on
# line 2 fails --check-config and start, and the port is not opened.
refused() {
        local daemon=$1 key=$2 url=$3 conf rc out port want
        conf=$tmp/$daemon-${key//./-}.conf
        port=${url##*:}
        printf '%s: {\n  %s = "%s";\n};\n' "${key%%.*}" "${key#*.}" "$url" >"$conf"
        want="$conf:2: $key: plaintext $url listens beyond loopback; use a tls+tcp:// endpoint, or set cluster.insecure = true"

        rc=0
        out=$("$SPARK_BUILD/spark-$daemon" --config "$conf" --check-config 2>&1) || rc=$?
        check_eq "spark-$daemon --check-config with $key = $url exits 78" 78 "$rc"
        check_eq "... naming the file, line, key and both ways out" "$want" "$out"
        rc=0
        out=$(timeout 20 "$SPARK_BUILD/spark-$daemon" --config "$conf" </dev/null 2>&1) || rc=$?
        check_eq "spark-$daemon started with it exits 78" 78 "$rc"
        check_match "... saying the same" "$(sed 's/[][\.*^$+?(){}|]/\\&/g' <<<"$want")" "$out"
        check_eq "... and nothing listens on port $port" "" "$(ss -Hltn "( sport = :$port )")"
}
refused master master.listen "tcp://0.0.0.0:$(free_port)"
refused worker worker.events_listen "tcp://[::]:$(free_port)"
refused driver driver.listen "tcp://:$(free_port)"

# loopback in every spelling, and dialing another host, are fine
port=$(free_port)
cat >"$tmp/loopback.conf" <<EOF
cluster: { master = "tcp://10.11.12.13:7077"; master_events = "tcp://node-1.example:7078"; };
master: { listen = "tcp://127.0.0.2:$port"; events_listen = "tcp://[::1]:$port"; };
worker: { listen = "tcp://localhost:$port"; events_listen = "ipc://$tmp/w.sock"; };
driver: { listen = "tls+tcp://0.0.0.0:$port"; executor_listen = "tls+tcp://0.0.0.0:$((port + 1))"; tls_cert_file = "$SPARK_SRC/tests/data/tls/host.pem";
          tls_key_file = "$SPARK_SRC/tests/data/tls/host.key"; };
EOF
sed -i "1s|};|tls_ca_file = \"$SPARK_SRC/tests/data/tls/ca.pem\"; };|" "$tmp/loopback.conf"
check_eq "loopback, ipc://, tls+tcp:// listeners and remote masters pass --check-config" "configuration OK" \
        "$("$SPARK_BUILD/spark-master" --config "$tmp/loopback.conf" --check-config 2>&1)"

# --- cluster.insecure = true ------------------------------------------------------
port=$(free_port)
eport=$(free_port)
cat >"$tmp/insecure.conf" <<EOF
cluster: { master = "tcp://127.0.0.1:$port"; insecure = true; };
master: { listen = "tcp://0.0.0.0:$port"; events_listen = "tcp://127.0.0.1:$eport"; state_dir = "$tmp/state"; };
EOF
check_eq "with cluster.insecure = true --check-config passes" "configuration OK" \
        "$("$SPARK_BUILD/spark-master" --config "$tmp/insecure.conf" --check-config 2>&1)"

unit=spark-test-insecure-$$.service
stop_user_units_on_exit "$unit"
warnings() {
        journalctl --no-pager -q -o cat --since "@$TEST_T0" -u "$unit" MESSAGE_ID=$INSECURE_ID 2>/dev/null
}
n_warnings_is() { [ "$(warnings | grep -c .)" = "$1" ]; }
listening() { [ -n "$(ss -Hltn "( sport = :$port )" | awk '$4 == "0.0.0.0:'"$port"'"')" ]; }
start_unit() {
        systemctl --user reset-failed "$unit" >/dev/null 2>&1 || true
        systemd-run --user --quiet --unit="$unit" -p Type=notify "$SPARK_BUILD/spark-master" --config "$tmp/insecure.conf"
}
check "the master starts (a unit of the user manager, logging to the journal)" start_unit
check "it listens on 0.0.0.0:$port" wait_for listening
check "it answers there" "$SPARK_BUILD/sparkctl" --master "tcp://127.0.0.1:$port" status
check "it warns in the journal with MESSAGE_ID=$INSECURE_ID" wait_until 20 n_warnings_is 1
check_match "... naming the file, the key and the endpoint" \
        "insecure\.conf: cluster\.insecure = true: plaintext tcp:// endpoints may listen beyond loopback \(master\.listen tcp://0\.0\.0\.0:$port\)" \
        "$(warnings)"
check "a restart" systemctl --user restart "$unit"
check "... warns again" wait_until 20 n_warnings_is 2
systemctl --user stop "$unit" >/dev/null 2>&1 || true
