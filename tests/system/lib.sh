# shellcheck shell=bash
# Helpers for the system tests: booted systemd containers (systemd-nspawn
# over a copy-on-write overlay of this machine's root, docs/DESIGN.md §12)
# into which a test installs the packages of build/packages and runs a
# cluster as users do.  On top of tests/harness/lib.sh (check, wait_until,
# on_exit, the closing count).
#
#   . "$(dirname "$0")/lib.sh"
#   require_system_test_host
#   ct_boot node-1 --private-network        # boots; torn down on exit
#   ct_install_debs node-1 spark-common spark-master
#   ct node-1 systemctl start spark-master  # runs a command inside
#
# Containers, overlays and bridges a test made are removed on exit, also on
# failure or ^C.  Only addresses inside namespaces made here are used: a
# bridge of our own with no address on the host, no route and no NAT.

. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"

SYSTEM_PACKAGES=${SPARK_PACKAGES:-$SPARK_SRC/build/packages}
BOOT_TIMEOUT=${BOOT_TIMEOUT:-60}
SUBMIT_TIMEOUT=${SUBMIT_TIMEOUT:-60}   # seconds for one sparkctl submit

declare -A _ct_dir=() _ct_nspawn=() _ct_init=()
_ct_bridges=()

require_system_test_host() {
        [ "$(id -u)" = 0 ] || skip_all "needs root (mounts, containers, network namespaces)"
        command -v systemd-nspawn >/dev/null || die "systemd-nspawn is missing: apt-get install systemd-container"
        ls "$SYSTEM_PACKAGES"/spark-common_*.deb >/dev/null 2>&1 ||
                die "no packages in $SYSTEM_PACKAGES: run make deb first"
        # The containers share this host's dpkg database (overlay of /).
        ! dpkg-query -W -f='${db:Status-Abbrev}' spark-common 2>/dev/null | grep -q '^i' ||
                die "spark-common is installed on this host: the containers would start with it"
}

# The version of the packages under test (from spark-common's file name).
package_version() {
        local f
        f=$(ls "$SYSTEM_PACKAGES"/spark-common_*.deb | head -n 1)
        f=${f##*/spark-common_}
        echo "${f%%_*}"
}

# Units of this machine that a test container must not start: whatever the
# host enabled for itself (databases, timers), and the periodic apt and dpkg
# jobs that would take the dpkg lock from under a test.
_ct_masks() {
        local u
        {
                for u in /etc/systemd/system/*.wants/*; do
                        case $u in *.service | *.timer | *.socket | *.path) echo "${u##*/}" ;; esac
                done
                echo apt-daily.service apt-daily-upgrade.service dpkg-db-backup.service man-db.service \
                        e2scrub_all.service fstrim.service systemd-timesyncd.service console-getty.service
        } | tr ' ' '\n' | grep -v '^$' | grep -v '^spark-' | sort -u | sed 's/^/systemd.mask=/'
}

_ct_find_init() {
        local name=$1 pid
        pid=$(pgrep -P "${_ct_nspawn[$name]}" 2>/dev/null | head -n 1)
        [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = systemd ] || return 1
        _ct_init[$name]=$pid
}

# ct NAME CMD...: run CMD inside the container, in all its namespaces.
ct() {
        local name=$1
        shift
        nsenter -t "${_ct_init[$name]}" -a env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
                LANG=C.UTF-8 SYSTEMD_PAGER= "$@"
}

# ct_sh NAME SCRIPT: run a shell script inside the container.
ct_sh() {
        ct "$1" sh -c "$2"
}

ct_root() {
        echo "${_ct_dir[$1]}/root"
}

_ct_system_running() {
        local s
        s=$(ct "$1" systemctl is-system-running 2>/dev/null)
        case $s in running | degraded) return 0 ;; *) return 1 ;; esac
}

# ct_boot NAME [NSPAWN-ARG...]: boot a container called NAME (also its host
# name) over an overlay of /, with its own machine id; wait until its
# systemd has finished starting up.
ct_boot() {
        local name=$1 d
        shift
        d=$TEST_TMPDIR/ct-$name
        mkdir -p "$d/upper" "$d/work" "$d/root"
        mount -t overlay overlay -o "lowerdir=/,upperdir=$d/upper,workdir=$d/work" "$d/root" ||
                die "cannot mount an overlay of / for $name"
        _ct_dir[$name]=$d
        on_exit "ct_destroy $name"
        # A machine of its own: a fresh machine id, no copy of this host's journal.
        systemd-id128 new >"$d/root/etc/machine-id"
        echo "$name" >"$d/root/etc/hostname"   # systemd prefers it to --hostname
        printf '127.0.0.1 localhost\n127.0.1.1 %s\n::1 localhost ip6-localhost ip6-loopback\n' "$name" \
                >"$d/root/etc/hosts"
        rm -rf "$d/root/var/log/journal/"*
        # This machine's image carries Docker's policy-rc.d, which forbids
        # maintainer scripts to start or stop services; a Debian host has none.
        rm -f "$d/root/usr/sbin/policy-rc.d"
        # Whatever of ours this host has (a `make install`, a test user)
        # would stand in the packages' way: the containers start without it.
        rm -rf "$d/root/etc/spark" "$d/root/var/lib/spark" "$d/root/usr/lib/spark" \
                "$d/root"/usr/sbin/spark-* "$d/root"/usr/bin/sparkctl "$d/root"/usr/bin/spark-tls "$d/root"/etc/systemd/system/spark-*
        systemd-nspawn --directory="$d/root" --boot --register=no --keep-unit --machine="$name" \
                --hostname="$name" --console=pipe "$@" -- $(_ct_masks) \
                </dev/null >"$d/console.log" 2>&1 &
        _ct_nspawn[$name]=$!
        wait_until 20 _ct_find_init "$name" || die "$name: systemd-nspawn started no init (see $d/console.log)"
        wait_until "$BOOT_TIMEOUT" _ct_system_running "$name" || {
                ct "$name" systemctl --failed --no-pager || true
                die "$name: did not finish booting in ${BOOT_TIMEOUT}s"
        }
        echo "# $name booted (init pid ${_ct_init[$name]}): $(ct "$name" systemctl is-system-running)"
}

ct_alive() {
        local pid=${_ct_nspawn[$1]:-}
        [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null
}

_ct_gone() {
        ! ct_alive "$1"
}

# ct_power_cut NAME: the host loses power: its network link goes down first
# (nobody hears a goodbye), then every process in it is killed at once.
ct_power_cut() {
        local name=$1
        ip link set "vb-$name" down 2>/dev/null || true
        kill -KILL "${_ct_init[$name]}" 2>/dev/null || true
        wait_until 20 _ct_gone "$name" || kill -KILL "${_ct_nspawn[$name]}" 2>/dev/null || true
        wait "${_ct_nspawn[$name]}" 2>/dev/null || true
}

# ct_destroy NAME: power the container off (killing it if it does not go
# within 20 s), unmount its overlay and remove its files.
ct_destroy() {
        local name=$1 d=${_ct_dir[$1]:-}
        [ -n "$d" ] || return 0
        [ "$_failed" -eq 0 ] || ct_dump_journal "$name" 'spark-*'
        if ct_alive "$name"; then
                ct "$name" systemctl poweroff --no-block >/dev/null 2>&1 || true
                if ! wait_until 20 _ct_gone "$name"; then
                        echo "# $name did not power off in 20 s: killing it"
                        kill -KILL "${_ct_init[$name]}" "${_ct_nspawn[$name]}" 2>/dev/null || true
                        wait_until 10 _ct_gone "$name" || true
                fi
        fi
        wait "${_ct_nspawn[$name]}" 2>/dev/null || true
        if mountpoint -q "$d/root"; then
                umount "$d/root" 2>/dev/null || umount -l "$d/root" || true
        fi
        if ! mountpoint -q "$d/root"; then
                rm -rf "$d"
        else
                echo "# $d/root is still mounted: left in place"
        fi
        unset "_ct_dir[$name]"
}

# ct_dump_journal NAME UNIT-PATTERN...: the last lines the units logged, for
# a failed test's post-mortem.
ct_dump_journal() {
        local name=$1
        shift
        ct_alive "$name" || return 0
        echo "# --- $name: journal of $*"
        ct "$name" journalctl --no-pager -q -o short-monotonic -n 80 "${@/#/--unit=}" 2>&1 | sed 's/^/#   /'
}

# ct_install_debs NAME PACKAGE...: copy the packages' .debs into the
# container and install them with dpkg -i.
ct_install_debs() {
        local name=$1 v p debs=()
        shift
        v=$(package_version)
        mkdir -p "$(ct_root "$name")/var/tmp/spark-debs"
        for p in "$@"; do
                cp "$SYSTEM_PACKAGES/${p}_${v}_"*.deb "$(ct_root "$name")/var/tmp/spark-debs/" || return 1
                debs+=("/var/tmp/spark-debs/$(basename "$SYSTEM_PACKAGES/${p}_${v}_"*.deb)")
        done
        ct_dpkg "$name" -i "${debs[@]}"
}

# ct_boot_one_host NAME: a booted container NAME on its own network with
# spark-common, spark-master, spark-worker and spark-driver installed (a
# check); if the test fails, the worker's and the executors' journal is
# shown.
ct_boot_one_host() {
        ct_boot "$1" --private-network
        on_exit "[ \$_failed -eq 0 ] || ct_dump_journal $1 spark-worker 'spark-executor-*'"
        check "dpkg -i installs spark-common, spark-master, spark-worker, spark-driver" \
                ct_install_debs "$1" spark-common spark-master spark-worker spark-driver
}

# ct_dpkg NAME DPKG-ARG...: dpkg in the container; its output goes to
# dpkg.log in the test's directory, and its tail to stdout if it fails.
ct_dpkg() {
        local name=$1 log=$TEST_TMPDIR/dpkg-$1.log
        shift
        echo "# $name: dpkg $*" >>"$log"
        if ! ct "$name" dpkg "$@" >>"$log" 2>&1; then
                tail -n 20 "$log" | sed 's/^/#   /'
                return 1
        fi
}

# ct_set NAME FILE SECTION KEY VALUE: set KEY in SECTION of a libconfig
# file in the container, in place: the shipped files have every key.
ct_set() {
        local name=$1 file=$2 section=$3 key=$4 value=$5 path
        path=$(ct_root "$name")$file
        grep -Eq "^[[:space:]]*$key[[:space:]]*=" "$path" || {
                echo "ct_set: no key $key in $file" >&2
                return 1
        }
        sed -i -E "/^$section:/,/^};/ s|^([[:space:]]*)$key[[:space:]]*=.*;|\1$key = $value;|" "$path"
}

# ct_unit_journal NAME UNIT-PATTERN [JOURNALCTL-ARG...]: message text.
ct_unit_journal() {
        local name=$1 unit=$2
        shift 2
        ct "$name" journalctl --no-pager -q -o cat --unit="$unit" "$@" 2>/dev/null
}

# ct_journal_grep NAME UNIT-PATTERN REGEX: poll with wait_until.
ct_journal_grep() {
        ct_unit_journal "$1" "$2" | grep -Eq -- "$3"
}

ct_is_active() {
        [ "$(ct "$1" systemctl is-active "$2" 2>/dev/null)" = active ]
}

# ct_prop NAME UNIT PROPERTY: one property's value.
ct_prop() {
        ct "$1" systemctl show -p "$3" --value "$2" 2>/dev/null
}

# Executor units loaded in the container, one a line.
ct_executor_units() {
        ct "$1" systemctl list-units --all --plain --no-legend 'spark-executor-*' 2>/dev/null | awk '{ print $1 }'
}

# ct_executor_pids NAME: "unit pid" lines of running executor units.
ct_executor_pids() {
        local u
        for u in $(ct_executor_units "$1"); do
                echo "$u $(ct_prop "$1" "$u" MainPID)"
        done | sort
}

# --- a private network ----------------------------------------------------------

# bridge_create NAME: an Ethernet bridge with no address and no IPv6 on
# this host: containers on it reach each other and nothing else.
bridge_create() {
        ip link add "$1" type bridge || die "cannot create bridge $1"
        _ct_bridges+=("$1")
        on_exit "bridge_delete $1"
        sysctl -qw "net.ipv6.conf.$1.disable_ipv6=1" 2>/dev/null || true
        ip link set "$1" up
}

bridge_delete() {
        ip link del "$1" 2>/dev/null || true
}

# ct_address NAME ADDRESS/PREFIX: the container's host0 link (from
# --network-bridge) gets ADDRESS; no default route.
ct_address() {
        ct "$1" ip addr add "$2" dev host0 && ct "$1" ip link set host0 up
}

# ct_boot_network BRIDGE NODE...: a private bridge, and the containers NODE...
# booted on it as node-1, node-2, ... would be: NODE number N at 10.77.0.N,
# every node's name in every /etc/hosts, no default route anywhere.  Each
# step is a check.
ct_boot_network() {
        local br=$1 h n=0 hosts
        shift
        hosts="127.0.0.1 localhost"
        for h in "$@"; do
                n=$((n + 1))
                hosts+=$'\n'"10.77.0.$n $h"
        done
        bridge_create "$br"
        n=0
        for h in "$@"; do
                n=$((n + 1))
                # ct_boot mounts the overlay first: write /etc/hosts once it is there.
                ct_boot "$h" --network-bridge="$br"
                printf '%s\n' "$hosts" >"$(ct_root "$h")/etc/hosts"
                check "$h: address 10.77.0.$n on the private bridge" ct_address "$h" "10.77.0.$n/24"
        done
        check_eq "and nothing else: no default route in any container" "" \
                "$(for h in "$@"; do ct "$h" ip route show default; done)"
}

# ct_job_done PID OUT ERR N: the sparkctl submit running in the background as
# PID (a child of this shell) ends, exits 0, and printed each of its N
# results exactly once, in order ("INDEX ..." lines in OUT); its ERR is shown
# if it failed.
ct_job_done() {
        local rc=0
        timeout 120 tail --pid="$1" -f /dev/null
        wait "$1" || rc=$?
        check_eq "the job completes (sparkctl exits 0)" 0 "$rc"
        [ "$rc" = 0 ] || sed 's/^/#   stderr: /' "$3"
        check_eq "with every one of the $4 results exactly once" "$(seq 0 $(($4 - 1)))" "$(awk '{ print $1 }' "$2")"
}

# --- certificates in containers ---------------------------------------------------

# ct_install_tls CA_HOST CA HOST NAME...: the CA's certificate and NAME's
# certificate and key (made by spark-tls in CA, a directory of CA_HOST) in
# /etc/spark/tls of HOST, the key readable by group spark only.
ct_install_tls() {
        local src dst h=$3 name
        src=$(ct_root "$1")$2
        dst=$(ct_root "$h")/etc/spark/tls
        shift 3
        install -d -m 0755 "$dst" && install -m 0644 "$src/ca.pem" "$dst/" || return 1
        for name in "$@"; do
                install -m 0644 "$src/$name.pem" "$dst/" &&
                        install -m 0640 "$src/$name.key" "$dst/" &&
                        ct "$h" chgrp spark "/etc/spark/tls/$name.key" || return 1
        done
}

# ct_own_tls HOST FILE SECTION NAME: the section's own certificate and key.
ct_own_tls() {
        ct_set "$1" "$2" "$3" tls_cert_file "\"/etc/spark/tls/$4.pem\"" &&
                ct_set "$1" "$2" "$3" tls_key_file "\"/etc/spark/tls/$4.key\""
}

# ct_tls_cluster HOST MASTERS EVENTS: HOST's cluster.conf names the masters'
# request and event endpoints and the cluster CA (ct_install_tls).
ct_tls_cluster() {
        ct_set "$1" /etc/spark/cluster.conf cluster master "\"$2\""
        ct_set "$1" /etc/spark/cluster.conf cluster master_events "\"$3\""
        ct_set "$1" /etc/spark/cluster.conf cluster tls_ca_file '"/etc/spark/tls/ca.pem"'
}

# ct_tls_listen HOST DAEMON PORT: DAEMON on HOST (its section of
# /etc/spark/DAEMON.conf) listens on tls+tcp:// on every address, for
# requests on PORT and events on PORT + 1, with its own certificate
# HOST-DAEMON (ct_install_tls).
ct_tls_listen() {
        local conf=/etc/spark/$2.conf
        ct_set "$1" "$conf" "$2" listen "\"tls+tcp://0.0.0.0:$3\""
        ct_set "$1" "$conf" "$2" events_listen "\"tls+tcp://0.0.0.0:$(($3 + 1))\""
        ct_own_tls "$1" "$conf" "$2" "$1-$2"
}

# ct_admin_sparkctl HOST CA: sparkctl as root on HOST presents the admin
# certificate CA/ops, which no daemon (nor the spark user) can read.
ct_admin_sparkctl() {
        printf '#!/bin/sh\nexec /usr/bin/sparkctl --tls-ca /etc/spark/tls/ca.pem --tls-cert %s/ops.pem --tls-key %s/ops.key "$@"\n' \
                "$2" "$2" >"$(ct_root "$1")/usr/local/bin/sparkctl" &&
                chmod 0755 "$(ct_root "$1")/usr/local/bin/sparkctl"
}


# ct_app_id NAME [APP-NAME]: the id of the (named) application the master knows.
ct_app_id() {
        ct "$1" sparkctl status --json 2>/dev/null | python3 -c '
import json, sys
want = sys.argv[1] if len(sys.argv) > 1 else None
for a in json.load(sys.stdin).get("apps", []):
    if want is None or a.get("name") == want:
        print(a["app_id"]); break' ${2:+"$2"}
}

# ct_count_executors NAME STATE [HOST]: executors the master lists in STATE
# (e.g. running), on HOST if given.
ct_count_executors() {
        ct "$1" sparkctl status --json 2>/dev/null | python3 -c '
import json, sys
state, host = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else None)
s = json.load(sys.stdin)
workers = {w.get("worker_id"): w for w in s.get("workers", [])}
n = 0
for e in s.get("executors", []):
    if e.get("state") != state:
        continue
    if host and host not in (e.get("host"), workers.get(e.get("worker_id"), {}).get("host")):
        continue
    n += 1
print(n)' "$2" ${3:+"$3"}
}

ct_executors_at_least() {
        [ "$(ct_count_executors "$1" "$2" "${4:-}")" -ge "$3" ] 2>/dev/null
}
