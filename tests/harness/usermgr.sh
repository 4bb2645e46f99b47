#!/usr/bin/env bash
# A private systemd user manager for black-box tests (docs/DESIGN.md §12).
#
#   usermgr.sh start DIR    start a manager; write DIR/env for tests to `source`
#   usermgr.sh stop DIR     stop it and remove everything start made (idempotent)
#
# The manager runs in its own mount namespace (a tmpfs on /run/systemd, so
# /run/systemd/system exists only for it) and its own cgroup namespace rooted at
# a child cgroup of *our* cgroup in every hierarchy it may use, so it can neither
# move nor trim the machine's processes.  Its cgroup subtree is killed and
# removed on stop.  If no journald runs, one is started in the host namespaces
# (units log through the host's /run/systemd/journal, bound into the manager's
# namespace, so journalctl on the host sees their output); the last harness to
# stop stops it again.
#
# Requires root (cgroup and namespace setup).  Environment knobs:
#   USERMGR_TIMEOUT      seconds to wait for the manager to come up (default 30)
#   USERMGR_LOG_LEVEL    the manager's log level (default info); it logs to
#                        DIR/manager.log
#   USERMGR_REGISTRY     where harnesses register for journald sharing
#                        (default /run/spark-test-harness)

set -euo pipefail

SYSTEMD_BIN=${SYSTEMD_BIN:-/lib/systemd/systemd}
JOURNALD_BIN=${JOURNALD_BIN:-/lib/systemd/systemd-journald}
TIMEOUT=${USERMGR_TIMEOUT:-30}
REGISTRY=${USERMGR_REGISTRY:-/run/spark-test-harness}
# Controllers (v1) the manager gets; the named systemd hierarchy and the
# cgroup2 hierarchy are always given to it.
WANT_CONTROLLERS=(memory pids cpu)

log() { echo "usermgr: $*" >&2; }
die() { log "error: $*"; exit 1; }

# Appends "KEY=VALUE" (shell-quoted) to DIR/state, which stop reads.  Written
# as each resource is made, so stop can undo a start that failed half-way.
state_add() {
        printf '%s=%q\n' "$1" "$2" >>"$STATE"
}

pid_alive() {
        [ -n "${1:-}" ] && [ -d "/proc/$1" ] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null
}

pid_starttime() {
        # Field 22 of /proc/PID/stat, after the parenthesised comm (which may
        # contain spaces).
        local s a
        s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
        read -ra a <<<"${s##*) }"
        echo "${a[19]}"
}

# Prints "hostdir mountdir v1opts" for every cgroup hierarchy the manager gets:
#   hostdir   our own cgroup in that hierarchy, as a host path
#   mountdir  the directory name under the namespace's /sys/fs/cgroup ("" for
#             the single cgroup2 mount of a pure-v2 machine)
#   v1opts    mount options for a v1 hierarchy, "-" for cgroup2
cgroup_hierarchies() {
        local line id ctrls path want c w mp root opts hostdir v2only=0
        [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ] && v2only=1
        while IFS= read -r line; do
                id=${line%%:*}; line=${line#*:}
                ctrls=${line%%:*}; path=${line#*:}
                if [ -z "$ctrls" ]; then
                        # cgroup2.  A hybrid machine may list "0::" even when
                        # no cgroup2 is mounted; then skip it.
                        mp='' root=''
                        read -r mp root < <(awk '$0 ~ / - cgroup2 / { print $5, $4; exit }' /proc/self/mountinfo) || true
                        [ -n "${mp:-}" ] || continue
                        hostdir=$mp${path#"$root"}
                        hostdir=${hostdir%/}
                        if [ $v2only = 1 ]; then echo "$hostdir - -"; else echo "$hostdir unified -"; fi
                        continue
                fi
                want=0
                for c in ${ctrls//,/ }; do
                        [ "$c" = name=systemd ] && want=1
                        for w in "${WANT_CONTROLLERS[@]}"; do [ "$c" = "$w" ] && want=1; done
                done
                [ $want = 1 ] || continue
                # The v1 mount whose super options hold exactly these controllers.
                mp='' root=''
                read -r mp root < <(awk -v ctrls="$ctrls" '
                        $0 ~ / - cgroup / {
                                for (i = 7; $i != "-"; i++) ;
                                n = split($(i + 3), o, ",")
                                for (j = 1; j <= n; j++) have[o[j]] = 1
                                m = split(ctrls, c, ",")
                                ok = 1
                                for (j = 1; j <= m; j++) if (!(c[j] in have)) ok = 0
                                delete have
                                if (ok) { print $5, $4; exit }
                        }' /proc/self/mountinfo) || true
                [ -n "${mp:-}" ] || die "cgroup hierarchy $id ($ctrls) is not mounted"
                [ "$root" = / ] && root=
                hostdir=$mp${path#"$root"}
                hostdir=${hostdir%/}
                case $ctrls in
                name=*) opts=none,$ctrls ;;
                *) opts=$ctrls ;;
                esac
                echo "$hostdir $(basename "$mp") $opts"
        done </proc/self/cgroup
}

journald_running() {
        # A journald in *our* mount namespace (containers' journalds do not
        # count: their /run/systemd/journal is not ours).
        local p ns
        ns=$(readlink /proc/self/ns/mnt)
        for p in $(pgrep -x systemd-journal 2>/dev/null); do
                [ "$(readlink "/proc/$p/ns/mnt" 2>/dev/null)" = "$ns" ] && return 0
        done
        return 1
}

# Registry of live harnesses, so that a journald one of them started is
# stopped by the last one out, not under another's feet.
registry_lock() {
        mkdir -p "$REGISTRY/managers"
        exec 9>"$REGISTRY/lock"
        flock -w 60 9 || die "cannot lock $REGISTRY/lock"
}

registry_unlock() {
        exec 9>&-
}

# An entry holds the pid of the harness while it starts, then the manager's.
registry_set() {
        registry_lock
        echo "$1" >"$REGISTRY/managers/$CGNAME"
        registry_unlock
}

registry_others_alive() {
        local f pid
        for f in "$REGISTRY"/managers/*; do
                [ -e "$f" ] || continue
                [ "$(basename "$f")" = "$CGNAME" ] && continue
                pid=$(cat "$f" 2>/dev/null || true)
                if pid_alive "$pid"; then return 0; fi
                rm -f "$f"      # a harness that died without stop
        done
        return 1
}

start_journald() {
        local i
        registry_lock
        echo $$ >"$REGISTRY/managers/$CGNAME"
        state_add REGISTERED 1
        if [ -S /run/systemd/journal/stdout ] && journald_running; then
                registry_unlock
                return 0
        fi
        # Outside our cgroup subtree and session: it may outlive this harness
        # if another one still uses it.
        setsid env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "$JOURNALD_BIN" \
                </dev/null >>"$DIR/journald.log" 2>&1 9>&- &
        local jpid=$!
        echo "$jpid $(pid_starttime "$jpid")" >"$REGISTRY/journald.pid"
        state_add JOURNALD_PID "$jpid"
        for ((i = 0; i < 100; i++)); do
                [ -S /run/systemd/journal/stdout ] && [ -S /run/systemd/journal/socket ] && break
                pid_alive "$jpid" || break
                sleep 0.05
        done
        registry_unlock
        [ -S /run/systemd/journal/stdout ] ||
                die "journald did not come up; $DIR/journald.log says: $(tail -n 20 "$DIR/journald.log")"
        log "started systemd-journald (pid $jpid)"
}

stop_journald() {
        local jpid jstart i
        [ -n "${REGISTERED:-}" ] || return 0
        registry_lock
        rm -f "$REGISTRY/managers/$CGNAME"
        if [ -f "$REGISTRY/journald.pid" ] && ! registry_others_alive; then
                read -r jpid jstart <"$REGISTRY/journald.pid" || true
                if pid_alive "$jpid" && [ "$(pid_starttime "$jpid")" = "$jstart" ]; then
                        kill -TERM "$jpid" 2>/dev/null || true
                        for ((i = 0; i < 100; i++)); do pid_alive "$jpid" || break; sleep 0.05; done
                        kill -KILL "$jpid" 2>/dev/null || true
                        log "stopped systemd-journald (pid $jpid)"
                fi
                rm -f "$REGISTRY/journald.pid"
        fi
        registry_unlock
}

# The script the manager's namespace runs before exec'ing systemd --user.
# Arguments: DIR, then "mountdir v1opts" pairs.
ns_setup_script() {
        cat <<'EOF'
set -e
dir=$1; shift
# /run/systemd: a private tmpfs with system/ (so systemd --user agrees to run)
# and the host's journal sockets.
# /run a mount point of its own, as on a booted host: else units with
# ProtectProc= (which implies MountAPIVFS=) get an empty tmpfs on /run and
# lose the journal's sockets.
mountpoint -q /run || mount --bind /run /run
mkdir -p "$dir/hostsd"
mount --bind /run/systemd "$dir/hostsd"
mount -t tmpfs -o mode=755 tmpfs /run/systemd
mkdir /run/systemd/system /run/systemd/journal
mount --bind "$dir/hostsd/journal" /run/systemd/journal
umount -l "$dir/hostsd"
# $XDG_RUNTIME_DIR/credentials: a shared tmpfs, as under a real
# /run/user/UID.  systemd mounts a unit's credentials (LoadCredential=) from
# a child mount namespace; below our private mounts that mount would never
# reach the unit, and a directory on disk it refuses to clean up.
mkdir -p "$XDG_RUNTIME_DIR/credentials"
mount -t tmpfs -o mode=700 tmpfs "$XDG_RUNTIME_DIR/credentials"
mount --make-shared "$XDG_RUNTIME_DIR/credentials"
# The nodes PID 1 makes at boot, which InaccessiblePaths=, ProtectKernelLogs=
# and ProtectKernelTunables= mount over what they hide: executor units use them.
i=/run/systemd/inaccessible
mkdir -m 0555 $i && mkdir -m 0000 $i/dir && install -m 0000 /dev/null $i/reg &&
        mknod -m 0000 $i/chr c 0 0 && mknod -m 0000 $i/blk b 0 0 && mkfifo -m 0000 $i/fifo
# /sys/fs/cgroup: only the hierarchies we were given, rooted (by the cgroup
# namespace) at our own child cgroups.
if [ "$1" = - ]; then
        mount -t cgroup2 cgroup2 /sys/fs/cgroup
else
        mount -t tmpfs -o mode=755 tmpfs /sys/fs/cgroup
        while [ $# -ge 2 ]; do
                mkdir "/sys/fs/cgroup/$1"
                if [ "$2" = - ]; then
                        mount -t cgroup2 cgroup2 "/sys/fs/cgroup/$1"
                else
                        mount -t cgroup -o "$2" cgroup "/sys/fs/cgroup/$1"
                        # "cpu,cpuacct" is also reachable as cpu and cpuacct.
                        case $1 in *,*)
                                for c in $(echo "$1" | tr , ' '); do
                                        ln -s "$1" "/sys/fs/cgroup/$c"
                                done;;
                        esac
                fi
                shift 2
        done
fi
cd /
echo $$ >"$dir/manager.pid"
exec "$SYSTEMD_BIN" --user
EOF
}

manager_state() {
        # "running", "degraded", ... once the manager answers on its private
        # socket; empty if it does not.
        timeout 5 systemctl --user show -p SystemState --value 2>/dev/null || true
}

bus_answers() {
        timeout 5 busctl --user call org.freedesktop.systemd1 /org/freedesktop/systemd1 \
                org.freedesktop.DBus.Peer Ping >/dev/null 2>&1
}

cmd_start() {
        local h hostdir mountdir opts mpid s i starter st
        local -a hier=() nsargs=()
        [ "$(id -u)" = 0 ] || die "a private user manager needs root (namespaces, cgroups)"
        mkdir -p "$DIR"
        DIR=$(cd "$DIR" && pwd)
        STATE=$DIR/state
        if [ -f "$STATE" ]; then
                log "$DIR holds a previous harness; stopping it first"
                cmd_stop
        fi
        : >"$STATE"
        rm -f "$DIR/env" "$DIR/manager.pid"

        # A valid slice name: journald (on the host) skips leading *.slice
        # components of a cgroup path when it derives _SYSTEMD_UNIT, so the
        # units' lines get _SYSTEMD_UNIT=NAME.service as on a real host.
        CGNAME=spark-test-$$-$(od -An -N4 -tx4 /dev/urandom | tr -d ' ').slice
        state_add CGNAME "$CGNAME"
        RUNTIME_DIR=$(mktemp -d /tmp/spark-um.XXXXXX)
        state_add RUNTIME_DIR "$RUNTIME_DIR"
        mkdir -p "$RUNTIME_DIR/systemd/user" "$DIR/home/.config" "$DIR/home/.local/share" \
                "$DIR/home/.local/state" "$DIR/home/.cache"

        h=$(cgroup_hierarchies) || exit 1
        mapfile -t hier <<<"$h"
        [ ${#hier[@]} -gt 0 ] || die "no cgroup hierarchies found in /proc/self/cgroup"
        for h in "${hier[@]}"; do
                read -r hostdir mountdir opts <<<"$h"
                [ -d "$hostdir" ] || die "our cgroup $hostdir does not exist"
                mkdir "$hostdir/$CGNAME"
                state_add "CGROUP_DIRS[${#nsargs[@]}]" "$hostdir/$CGNAME"
                nsargs+=("$mountdir" "$opts")
        done

        start_journald

        # The subshell joins the new cgroups, then becomes (by exec) unshare,
        # sh and finally systemd: the manager and everything it starts live in
        # the new subtrees.  setsid: a ^C at the test's terminal must not reach
        # the manager before our teardown does (-w: if setsid must fork, it stays
        # to wait, so $starter lives as long as the manager).
        (
                for h in "${hier[@]}"; do
                        read -r hostdir _ _ <<<"$h"
                        echo "$BASHPID" >"$hostdir/$CGNAME/cgroup.procs"
                done
                exec setsid -w env -i \
                        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
                        HOME="$DIR/home" USER="$(id -un)" LOGNAME="$(id -un)" SHELL=/bin/sh \
                        LANG=C.UTF-8 XDG_RUNTIME_DIR="$RUNTIME_DIR" \
                        XDG_CONFIG_HOME="$DIR/home/.config" XDG_DATA_HOME="$DIR/home/.local/share" \
                        XDG_STATE_HOME="$DIR/home/.local/state" XDG_CACHE_HOME="$DIR/home/.cache" \
                        SYSTEMD_BIN="$SYSTEMD_BIN" SYSTEMD_LOG_TARGET=journal \
                        SYSTEMD_LOG_LEVEL="${USERMGR_LOG_LEVEL:-info}" \
                        unshare -m -C --propagation private \
                        sh -c "$(ns_setup_script)" sh "$DIR" "${nsargs[@]}"
        ) </dev/null >"$DIR/manager.log" 2>&1 9>&- &
        starter=$!
        state_add STARTER_PID "$starter"

        export XDG_RUNTIME_DIR=$RUNTIME_DIR
        export DBUS_SESSION_BUS_ADDRESS=unix:path=$RUNTIME_DIR/bus
        mpid=
        s=
        for ((i = 0; i < TIMEOUT * 10; i++)); do
                if [ -z "$mpid" ] && [ -s "$DIR/manager.pid" ]; then
                        mpid=$(cat "$DIR/manager.pid")
                        state_add MANAGER_PID "$mpid"
                        registry_set "$mpid"
                fi
                if [ -n "$mpid" ] && ! pid_alive "$mpid"; then
                        break
                elif [ -z "$mpid" ] && ! pid_alive "$starter"; then
                        break
                fi
                if [ -n "$mpid" ] && [ -S "$RUNTIME_DIR/bus" ]; then
                        s=$(manager_state)
                        case $s in
                        running|degraded) bus_answers && break ;;
                        esac
                fi
                sleep 0.1
        done
        case $s in
        running) ;;
        degraded)
                log "warning: the manager is degraded; failed units:"
                systemctl --user --failed --no-legend --plain >&2 || true ;;
        *)
                if pid_alive "${mpid:-$starter}"; then
                        log "error: the user manager did not come up within ${TIMEOUT}s (state" \
                                "'${s:-none}', bus $([ -S "$RUNTIME_DIR/bus" ] && echo present || echo missing))"
                else
                        st=0
                        wait "$starter" || st=$?
                        log "error: the user manager exited with status $st while starting"
                fi
                log "last lines of $DIR/manager.log:"
                tail -n 30 "$DIR/manager.log" >&2 || true
                if [ -n "$mpid" ]; then
                        log "its journal:"
                        journalctl --no-pager -q -n 30 _PID="$mpid" >&2 || true
                fi
                cmd_stop
                exit 1 ;;
        esac

        cat >"$DIR/env" <<EOF
# Written by tests/harness/usermgr.sh; source it.
export XDG_RUNTIME_DIR=$(printf %q "$RUNTIME_DIR")
export DBUS_SESSION_BUS_ADDRESS=$(printf %q "unix:path=$RUNTIME_DIR/bus")
export SPARK_TEST_MANAGER_PID=$mpid
export SPARK_TEST_CGROUP=$CGNAME
export SPARK_TEST_CGROUP_DIRS=$(printf %q "$(sed -n 's/^CGROUP_DIRS\[[0-9]*\]=//p' "$STATE" | tr '\n' ' ')")
export SPARK_TEST_UNIT_DIR=$(printf %q "$RUNTIME_DIR/systemd/user")
export SPARK_TEST_HARNESS_DIR=$(printf %q "$DIR")
EOF
        log "user manager pid $mpid up (XDG_RUNTIME_DIR=$RUNTIME_DIR, cgroup $CGNAME)"
}

kill_cgroup_pids() {
        # Kills every process left in the subtrees, until they are empty.
        local d f pid round left
        for ((round = 0; round < 100; round++)); do
                left=0
                for d in "${CGROUP_DIRS[@]}"; do
                        [ -d "$d" ] || continue
                        while IFS= read -r f; do
                                while read -r pid; do
                                        [ -n "$pid" ] || continue
                                        left=1
                                        kill -KILL "$pid" 2>/dev/null || true
                                done <"$f"
                        done < <(find "$d" -name cgroup.procs 2>/dev/null)
                done
                [ $left = 0 ] && return 0
                sleep 0.05
        done
        log "warning: processes survive in ${CGROUP_DIRS[*]}"
}

cmd_stop() {
        local i d pid
        STATE=$DIR/state
        [ -f "$STATE" ] || return 0
        CGNAME='' RUNTIME_DIR='' MANAGER_PID='' STARTER_PID='' REGISTERED=''
        CGROUP_DIRS=()
        # shellcheck disable=SC1090
        . "$STATE"

        # Ask the manager to stop its units and exit, then make sure.
        for pid in "$MANAGER_PID" "$STARTER_PID"; do
                pid_alive "$pid" || continue
                grep -q "$CGNAME" "/proc/$pid/cgroup" 2>/dev/null || continue
                kill -TERM "$pid" 2>/dev/null || true
                for ((i = 0; i < 100; i++)); do pid_alive "$pid" || break; sleep 0.1; done
        done
        [ ${#CGROUP_DIRS[@]} -gt 0 ] && kill_cgroup_pids
        for d in "${CGROUP_DIRS[@]}"; do
                [ -d "$d" ] || continue
                # Depth-first; an emptied cgroup can take a moment to be removable.
                for ((i = 0; i < 50; i++)); do
                        find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true
                        [ -d "$d" ] || break
                        sleep 0.1
                done
                [ -d "$d" ] && log "warning: could not remove cgroup $d"
        done
        stop_journald
        case $RUNTIME_DIR in /tmp/spark-um.*) rm -rf "$RUNTIME_DIR" ;; esac
        rm -rf "${DIR:?}/hostsd" "${DIR:?}/home" "$DIR/env" "$DIR/manager.pid"
        rm -f "$STATE"
}

[ $# -eq 2 ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }
DIR=$2
case $1 in
start) cmd_start ;;
stop) [ -d "$DIR" ] || exit 0; DIR=$(cd "$DIR" && pwd); cmd_stop ;;
*) echo "usage: $0 start|stop DIR" >&2; exit 2 ;;
esac
