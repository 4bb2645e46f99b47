#!/usr/bin/env bash
# The master's journal of new applications (state_dir/apps.journal), seen
# from outside: an application answered is never lost when the master is
# killed before a snapshot holds it, a torn or corrupt entry is reported
# (naming the file) without stopping the master or losing the entries around
# it, and no app id is handed out twice across crashes, even when the host
# went down and took the last entry with it.
#
# To be sure an application is in the journal only, the test keeps the
# master from writing snapshots: a directory where it writes its temporary
# snapshot file (state_dir/.state.pb.tmp) makes every save fail, so the
# journal is never emptied.
# shellcheck disable=SC2154 # new_app sets a0, a1, ... by name
# shellcheck source=tests/harness/lib.sh
. "$(dirname "$0")/../harness/lib.sh"
require_user_manager

tmp=$(harness_tmpdir)
state=$tmp/state
journal=$state/apps.journal
fake_driver=$SPARK_BUILD/tests/helpers/fake-driver
[ -x "$fake_driver" ] || die "test helpers are not built (make test-helpers)"

cat >"$tmp/master.conf" <<EOF
cluster: { master = "ipc://$tmp/master.sock"; master_events = "ipc://$tmp/master-events.sock"; };
master: { listen = "ipc://$tmp/master.sock"; events_listen = "ipc://$tmp/master-events.sock";
          state_dir = "$state"; worker_timeout_ms = 5000; };
EOF

sparkctl() { "$SPARK_BUILD/sparkctl" --master "ipc://$tmp/master.sock" "$@"; }
# register NAME: prints the new app's id (no driver: no worker asks for it)
register() {
        "$fake_driver" --master "ipc://$tmp/master.sock" register --name "$1" \
                --driver-url "ipc://$tmp/nobody.sock" --max-cores 1 --memory 64
}
known_apps() { sparkctl status --json | jq -r '.apps[].app_id' | sort; }
master_answers() { sparkctl status >/dev/null 2>&1; }
number() { echo $((10#${1##*-})); }
journal_empty() { [ ! -s "$journal" ]; }
block_snapshots() { mkdir "$state/.state.pb.tmp"; }
allow_snapshots() { [ ! -d "$state/.state.pb.tmp" ] || rmdir "$state/.state.pb.tmp"; }

# Every id handed out so far, to check that none comes again.
handed_out=()
# new_app NAME VAR: registers NAME, sets VAR to its id; checks that the id is
# new and counts on from every earlier one.
new_app() {
        local id max=0 h
        id=$(register "$1") || die "$1: registration failed"
        for h in "${handed_out[@]}"; do
                [ "$(number "$h")" -le "$max" ] || max=$(number "$h")
        done
        check "$1: a new id ($id), after every id handed out before (last number $max)" \
                test "$(number "$id")" -gt "$max"
        handed_out+=("$id")
        printf -v "$2" '%s' "$id"
}
knows() { known_apps | grep -qx "$1"; }
# check_knows WHAT ID...
check_knows() {
        local what=$1 id missing=
        shift
        for id in "$@"; do
                knows "$id" || missing+=" $id"
        done
        check_eq "$what" "" "$missing"
}

run=0
# restart_master SIGNAL: stop it (KILL: a crash) and start it again on the
# same state_dir, letting it write snapshots again; waits until it answers.
restart_master() {
        stop_daemon master "$1" || true
        allow_snapshots
        run=$((run + 1))
        mv "$(daemon_log master)" "$tmp/master-run$run.log"
        start_master
}
start_master() {
        start_daemon master "$SPARK_BUILD/spark-master" --config "$tmp/master.conf"
        wait_for master_answers || die "the master does not answer after a restart (see $(daemon_log master))"
}

# frames FILE: "OFFSET LENGTH HEADER" of each frame: [u32 LE length with
# bit 31 set][u32 LE CRC-32C][entry] (HEADER 8), or [u32 LE length][entry]
# as written before checksums (HEADER 4)
frames() {
        local f=$1 size off=0 b0 b1 b2 b3 n hdr
        size=$(stat -c %s "$f")
        while [ $((size - off)) -ge 4 ]; do
                read -r b0 b1 b2 b3 < <(od -An -tu1 -j "$off" -N4 "$f")
                hdr=4
                if [ $((b3 & 128)) -ne 0 ]; then
                        hdr=8
                        b3=$((b3 & 127))
                fi
                n=$((b0 | b1 << 8 | b2 << 16 | b3 << 24))
                [ $((off + hdr + n)) -le "$size" ] || break
                echo "$off $n $hdr"
                off=$((off + hdr + n))
        done
}
# frame_of FILE ID: the "OFFSET LENGTH HEADER" of the frame that holds app ID
frame_of() {
        local off n hdr
        while read -r off n hdr; do
                if dd if="$1" bs=1 skip=$((off + hdr)) count="$n" status=none | grep -aq -- "$2"; then
                        echo "$off $n $hdr"
                        return 0
                fi
        done < <(frames "$1")
        return 1
}

start_master
check "the first start writes a snapshot" wait_for test -s "$state/state.pb"

# --- 1. killed right after the answer ------------------------------------------
new_app first a0
check "once in a snapshot, the journal is emptied" wait_for journal_empty

# no snapshot can hold the next one: it is in the journal only
block_snapshots
new_app crash-1 a1
check "at the answer, the application is in apps.journal" grep -aq -- "$a1" "$journal"
check_fails "... and in no snapshot" grep -aq -- "$a1" "$state/state.pb"
restart_master KILL
check_knows "killed after answering, the master still knows the application" "$a0" "$a1"
check "it says it restored it from apps.journal" \
        grep -q "Restored 1 applications registered after the last snapshot from $journal" "$(daemon_log master)"
new_app after-crash-1 a2
check "the restart wrote a snapshot with the application" grep -aq -- "$a1" "$state/state.pb"

# the same without help: SIGKILL as soon as the answer is in
a3=$(register crash-2) || die "crash-2: registration failed"
stop_daemon master KILL || true
if [ -s "$journal" ]; then echo "# crash-2: the kill came before a snapshot"; else echo "# crash-2: a snapshot came first"; fi
handed_out+=("$a3")
run=$((run + 1))
mv "$(daemon_log master)" "$tmp/master-run$run.log"
start_master
check_knows "crash-2: the application answered just before SIGKILL is known" "$a0" "$a1" "$a2" "$a3"
new_app after-crash-2 a4
check_eq "every application is listed once" "$(printf '%s\n' "${handed_out[@]}" | sort)" "$(known_apps)"

# --- 2. a torn last entry --------------------------------------------------------
check "the journal is emptied again" wait_for journal_empty
block_snapshots
new_app torn-1 b1
new_app torn-2 b2
stop_daemon master KILL || true
allow_snapshots
read -r off n hdr < <(frame_of "$journal" "$b2") || die "no entry for $b2 in $journal"
check_eq "entries carry a checksum" 8 "$hdr"
# a crash in the middle of appending one more: its header and half of it
dd if="$journal" bs=1 skip="$off" count=$((hdr + n / 2)) status=none >>"$journal.tail"
cat "$journal.tail" >>"$journal"
rm -f "$journal.tail"
run=$((run + 1))
mv "$(daemon_log master)" "$tmp/master-run$run.log"
start_master
check "with a torn last entry, the master runs" daemon_alive master
check_knows "every complete entry is restored" "$b1" "$b2"
check "the log names the journal and its torn tail" \
        grep -Eiq "$journal.*(torn|incomplete)|(torn|incomplete).*$journal" "$(daemon_log master)"
new_app after-torn b3

# Torn with nothing else in it: the crash came in the first append after a
# snapshot.  An application registered after the restart must not go after
# the torn bytes, where the next load would not find it.
check "the journal is emptied again" wait_for journal_empty
stop_daemon master TERM || true
printf '\x40\x00\x00\x00\x08\x07\x10' >>"$journal"
run=$((run + 1))
mv "$(daemon_log master)" "$tmp/master-run$run.log"
start_master
check "the log names the journal and its torn tail (nothing else in it)" \
        grep -Eiq "$journal.*(torn|incomplete)|(torn|incomplete).*$journal" "$(daemon_log master)"
block_snapshots
new_app after-torn-only c1
restart_master KILL
check_knows "an application registered after a torn tail survives the next crash" "$b3" "$c1"
new_app after-torn-only-crash c2

# --- 3. a corrupt entry that is not the last ---------------------------------------
# Its length is intact, its bytes are not: its checksum says so, and the
# entries after it are whole and must not be dropped with it.
check "the journal is emptied again" wait_for journal_empty
block_snapshots
new_app corrupt-1 d1
new_app corrupt-2 d2
new_app corrupt-3 d3
stop_daemon master KILL || true
allow_snapshots
read -r off n hdr < <(frame_of "$journal" "$d2") || die "no entry for $d2 in $journal"
head -c "$n" /dev/zero | tr '\0' '\377' | dd of="$journal" bs=1 seek=$((off + hdr)) conv=notrunc status=none
check_fails "the entry of $d2 is gone from the journal" grep -aq -- "$d2" "$journal"
run=$((run + 1))
mv "$(daemon_log master)" "$tmp/master-run$run.log"
start_master
check "with a corrupt entry, the master runs" daemon_alive master
check "the log names the journal and the damaged entry's offset" \
        grep -Eq "$journal: the entry at offset $off is damaged \(its checksum does not match\)" "$(daemon_log master)"
check "... and says what it restored and what not" \
        grep -Eq "$journal: restored [0-9]+ applications from [0-9]+ whole entries; 1 damaged entries \($((hdr + n)) bytes from offset $off\) could not be read" \
        "$(daemon_log master)"
check_knows "the entries before and after the corrupt one are restored" "$d1" "$d3"
check "the damaged journal is kept for a post-mortem" bash -c "ls '$journal'.corrupt-* >/dev/null 2>&1"
new_app after-corrupt d4
block_snapshots
new_app after-corrupt-2 d5
restart_master KILL
check_knows "the journal works after it was moved aside" "$d4" "$d5"

# --- 4. ids across crashes in a row ------------------------------------------------
for i in 1 2 3; do
        block_snapshots
        new_app "cycle-$i" e
        restart_master KILL
        check_knows "cycle $i: the application is known after the crash" "$e"
done
# all but the one whose entry was corrupt
check_eq "cycles: every application is listed once" "$(printf '%s\n' "${handed_out[@]}" | grep -vx "$d2" | sort -u)" \
        "$(known_apps)"

# The driver's web UI address is kept with its application: in its journal
# entry (a crash before any snapshot holds it), then in the snapshot.
ui_of() { sparkctl status --json | jq -r --arg a "$1" '.apps[] | select(.app_id == $a) | .ui_url'; }
block_snapshots
g1=$("$fake_driver" --master "ipc://$tmp/master.sock" register --name with-ui --driver-url "ipc://$tmp/nobody.sock" \
        --max-cores 1 --memory 64 --ui-url http://127.0.0.1:4047) || die "with-ui: registration failed"
handed_out+=("$g1")
restart_master KILL
check_eq "the driver's UI address survives a crash (journal entry)" "http://127.0.0.1:4047" "$(ui_of "$g1")"
check "the journal is emptied again" wait_for journal_empty
restart_master KILL
check_eq "the driver's UI address survives a crash (snapshot)" "http://127.0.0.1:4047" "$(ui_of "$g1")"

# The host goes down: the last entry was written (its id may have reached a
# worker) but never reached the disk.  The next start is in another boot;
# the numbers reserved on disk keep that id from coming again.
block_snapshots
new_app host-crash f1
stop_daemon master KILL || true
allow_snapshots
read -r off n hdr < <(frame_of "$journal" "$f1") || die "no entry for $f1 in $journal"
truncate -s "$off" "$journal"
boot=$(tr -d - </proc/sys/kernel/random/boot_id)
check "the state records the boot it was written in" grep -aq "$boot" "$state/state.pb"
perl -0777 -pi -e "s/$boot/0123456789abcdef0123456789abcdef/g" "$state/state.pb" "$journal"
run=$((run + 1))
mv "$(daemon_log master)" "$tmp/master-run$run.log"
start_master
check_fails "the entry lost with the host is not restored" knows "$f1"
new_app after-host-crash f2
check "after the host crash, $f1 is not handed out again ($f2)" test "$f2" != "$f1"

# --- 5. a save that fails is tried again, and shown -------------------------------
# A full disk, say: the state stays to be saved, the master tries again later
# (and later each time), says so in its status (sd_notify STATUS=), and
# saves as soon as it can, with no other change to prompt it.
notify_log=$tmp/notify.log
start_daemon notify python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a") as f:
    while True:
        f.write(s.recv(4096).decode(errors="replace").replace("\n", " ") + "\n")
        f.flush()' "$tmp/notify.sock" "$notify_log"
wait_for test -S "$tmp/notify.sock" || die "no notify socket"
stop_daemon master TERM || true
run=$((run + 1))
mv "$(daemon_log master)" "$tmp/master-run$run.log"
start_daemon master env NOTIFY_SOCKET="$tmp/notify.sock" "$SPARK_BUILD/spark-master" --config "$tmp/master.conf"
wait_for master_answers || die "the master does not answer (see $(daemon_log master))"
check "the master reports its status over NOTIFY_SOCKET" wait_for grep -q "STATUS=.*workers" "$notify_log"
check "the journal is emptied again" wait_for journal_empty

saves_retried() { [ "$(grep -c "Saving the state again in" "$(daemon_log master)")" -ge 2 ]; }
block_snapshots
new_app save-fails g1
check "a failed save is tried again, more than once" wait_for saves_retried
check "the status says the state is not saved, and why" wait_for grep -q "state not saved: Is a directory" "$notify_log"
check "meanwhile, the application is in the journal" grep -aq -- "$g1" "$journal"
allow_snapshots
check "once it can, the master saves without another change" wait_for journal_empty
check "the snapshot holds the application" grep -aq -- "$g1" "$state/state.pb"
check "it says it saved again" grep -q "Saved the state in $state again" "$(daemon_log master)"
status_clear() { tail -n 1 "$notify_log" | grep -q "STATUS=" && ! tail -n 1 "$notify_log" | grep -q "not saved"; }
check "the status no longer says so" wait_for status_clear
check_knows "nothing is lost" "$g1" "$f2"
