#!/usr/bin/env bash
# A three-node ZooKeeper ensemble on loopback, for the tests of the
# zookeeper recovery mode (docs/ha.md).  One ensemble per suite: the unit
# tests, the black-box tests and the fault scenarios each start one and share
# it between their tests.
#
#   zk.sh start DIR       start the ensemble; DIR/env (ZK_CONNECT, ZK_DIR) for
#                         tests to `source`; returns once a quorum serves
#   zk.sh stop DIR        stop every node (idempotent), remove DIR
#   zk.sh kill DIR N      SIGKILL node N (1-3)
#   zk.sh restart DIR N   start node N again (after kill)
#   zk.sh wait DIR [N]    wait until node N (default: any) serves requests
#
# Debian's zookeeper server (3.8) on Java, each node with its own dataDir and
# myid; tickTime 200 ms bounds the session timeouts the servers grant to
# 0.4-4 s, which keeps the tests short.  The AdminServer stays off: it would
# bind *:8080, the master's web port.  Small heaps and the serial collector:
# three JVMs share two cores with the tests.
#
# Environment: ZK_BASE_PORT (default: chosen free) the first of 30 ports;
# ZK_TIMEOUT seconds to wait for a quorum (default 60); ZK_CLIENT_HOST the
# address the client ports listen on (default 127.0.0.1; the fault suite
# gives its veth pair's host side, which its network namespace reaches).
set -euo pipefail

ZK_CLASSPATH="/etc/zookeeper/conf:/usr/share/java/*"
TIMEOUT=${ZK_TIMEOUT:-60}
CLIENT_HOST=${ZK_CLIENT_HOST:-127.0.0.1}

die() { echo "zk.sh: $*" >&2; exit 1; }

port_free() {
        ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

choose_base() {
        local base i ok
        for _ in $(seq 1 50); do
                base=$((20000 + (RANDOM % 900) * 10))
                ok=1
                for i in $(seq 0 29); do
                        port_free $((base + i)) || { ok=0; break; }
                done
                [ $ok = 1 ] && { echo $base; return; }
        done
        die "no 30 free ports found between 20000 and 29000"
}

# four-letter word $2 to the node on client port $1
zk_ask() {
        local out
        out=$( (exec 3<>"/dev/tcp/$CLIENT_HOST/$1" && echo "$2" >&3 && timeout 2 cat <&3) 2>/dev/null) || true
        printf '%s' "$out"
}

node_start() {
        local dir=$1 n=$2
        [ -f "$dir/zk$n/zoo.cfg" ] || die "$dir/zk$n: no such node"
        # shellcheck disable=SC2086
        setsid java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
                -Dzookeeper.log.dir="$dir/zk$n" -Dzookeeper.root.logger=INFO,CONSOLE \
                -cp "$ZK_CLASSPATH" org.apache.zookeeper.server.quorum.QuorumPeerMain "$dir/zk$n/zoo.cfg" \
                </dev/null >>"$dir/zk$n/server.log" 2>&1 &
        echo $! >"$dir/zk$n/pid"
}

node_serving() {
        # "This ZooKeeper instance is not currently serving requests" until
        # it is part of a quorum
        zk_ask "$1" srvr | grep -q '^Mode: '
}

cmd_start() {
        local dir=$1 base n deadline
        command -v java >/dev/null || die "java not found (apt-get install zookeeper)"
        [ -e /usr/share/java/zookeeper.jar ] || die "/usr/share/java/zookeeper.jar not found (apt-get install zookeeper)"
        mkdir -p "$dir"
        base=${ZK_BASE_PORT:-$(choose_base)}
        for n in 1 2 3; do
                mkdir -p "$dir/zk$n/data"
                echo $n >"$dir/zk$n/data/myid"
                cat >"$dir/zk$n/zoo.cfg" <<CFG
tickTime=200
initLimit=20
syncLimit=10
dataDir=$dir/zk$n/data
clientPort=$((base + n))
clientPortAddress=$CLIENT_HOST
admin.enableServer=false
4lw.commands.whitelist=ruok,stat,srvr,mntr
maxClientCnxns=200
server.1=127.0.0.1:$((base + 11)):$((base + 21))
server.2=127.0.0.1:$((base + 12)):$((base + 22))
server.3=127.0.0.1:$((base + 13)):$((base + 23))
CFG
        done
        for n in 1 2 3; do node_start "$dir" $n; done
        cat >"$dir/env" <<ENV
ZK_DIR=$dir
ZK_BASE_PORT=$base
ZK_CLIENT_HOST=$CLIENT_HOST
ZK_CONNECT=$CLIENT_HOST:$((base + 1)),$CLIENT_HOST:$((base + 2)),$CLIENT_HOST:$((base + 3))
export ZK_DIR ZK_BASE_PORT ZK_CLIENT_HOST ZK_CONNECT
ENV
        deadline=$((SECONDS + TIMEOUT))
        for n in 1 2 3; do
                until node_serving $((base + n)); do
                        [ $SECONDS -lt $deadline ] || { cmd_stop "$dir" keep; die "node $n not serving after ${TIMEOUT} s (see $dir/zk$n/server.log)"; }
                        sleep 0.2
                done
        done
}

cmd_stop() {
        local dir=$1 n pid
        for n in 1 2 3; do
                [ -f "$dir/zk$n/pid" ] || continue
                pid=$(cat "$dir/zk$n/pid")
                kill -TERM "$pid" 2>/dev/null || true
        done
        for n in 1 2 3; do
                [ -f "$dir/zk$n/pid" ] || continue
                pid=$(cat "$dir/zk$n/pid")
                for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
                kill -KILL "$pid" 2>/dev/null || true
                rm -f "$dir/zk$n/pid"
        done
        [ "${2:-}" = keep ] || rm -rf "$dir"
}

cmd_kill() {
        local dir=$1 n=$2 pid
        [ -f "$dir/zk$n/pid" ] || die "node $n of $dir is not running"
        pid=$(cat "$dir/zk$n/pid")
        kill -KILL "$pid" 2>/dev/null || true
        for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        rm -f "$dir/zk$n/pid"
}

cmd_wait() {
        local dir=$1 n=${2:-} base deadline
        # shellcheck disable=SC1091
        base=$(. "$dir/env" && echo "$ZK_BASE_PORT")
        CLIENT_HOST=$(. "$dir/env" && echo "${ZK_CLIENT_HOST:-127.0.0.1}")
        deadline=$((SECONDS + TIMEOUT))
        while :; do
                if [ -n "$n" ]; then
                        node_serving $((base + n)) && return 0
                else
                        for i in 1 2 3; do node_serving $((base + i)) && return 0; done
                fi
                [ $SECONDS -lt $deadline ] || die "no node serving after ${TIMEOUT} s"
                sleep 0.2
        done
}

[ $# -ge 2 ] || die "usage: zk.sh start|stop|kill|restart|wait DIR [N]"
case $1 in
start) cmd_start "$2" ;;
stop) cmd_stop "$2" ;;
kill) cmd_kill "$2" "${3:?node number}" ;;
restart) node_start "$2" "${3:?node number}" ;;
wait) cmd_wait "$2" "${3:-}" ;;
*) die "unknown command $1" ;;
esac
