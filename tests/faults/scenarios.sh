# shellcheck shell=bash
# shellcheck disable=SC2034,SC2154  # sets knobs and tables of run.sh and lib.sh
# The fault scenarios (sourced by tests/faults/run.sh).  Each NAME has an
# optional setup_NAME (knobs before the cluster starts) and inject_NAME, run
# once the job is under way.  inject_NAME sets DETECT_MS (a number, or "-")
# and DETECT_WHAT (what was timed), and calls problem() for anything wrong.
#
# Detection is timed from the suite's monotonic clock at injection to the
# stamp of the daemon's log line that shows it noticed.

SCENARIOS=(executor-kill executor-stop worker-kill worker-stop host-freeze master-kill journal-bitflip memory-max
           work-dir-full netns-cut driver-lost driver-kill driver-restart ha-leader-kill ha-zk-one-down ha-zk-quorum-loss
           ha-rolling-restart ha-partition preempt-worker-lost)
# Run only when named.
EXTRA_SCENARIOS=()

# pick_executor WORKER: "ID PID" of a running executor of the app on WORKER.
pick_executor() {
        local id pid
        id=$(executors_on "$1" | awk '{ print $1; exit }')
        [ -n "$id" ] || return 1
        pid=$(executor_main_pid "$id") || return 1
        echo "$id $pid"
}

# executor_loss ID T0 WHAT: times the driver's "Executor ID on H lost" line.
executor_loss() {
        if detected 30 driver "$2" "Executor $1 on [^ ]+ lost: "; then
                DETECT_WHAT="$3: $(message "$DETECT_LINE" | sed -E 's/.* lost: ([^;]*);.*/\1/')"
                return 0
        fi
        undetected "$3: not detected" "the driver never said executor $1 was lost"
        return 1
}

# worker_loss WORKER T0 WHICH [HOW]: times the master's "Worker ID lost: "
# line; WHICH (frozen, cut-off, ...) names the worker in the problem if the
# master never says so, HOW (mid-preemption) the loss in DETECT_WHAT.
worker_loss() {
        if detected $((WORKER_TIMEOUT_MS / 1000 + 10)) master "$2" "Worker ${WID[$1]} lost: "; then
                DETECT_WHAT="master: worker lost${4:+ $4} ($(message "$DETECT_LINE" | sed -E 's/.* lost: (.*)/\1/'))"
                return 0
        fi
        undetected "master: not detected" "the master never declared the $3 worker lost"
        return 1
}

# worker_lost_in_time: a silent worker was declared lost within half a
# worker_timeout_ms of its timeout.
worker_lost_in_time() {
        [ "$DETECT_MS" -le $((WORKER_TIMEOUT_MS * 3 / 2)) ] ||
                problem "declared lost after $DETECT_MS ms (worker_timeout_ms $WORKER_TIMEOUT_MS)"
}

# worker_registers_again WORKER T1 TIMEOUT_S WHEN: the master logs WORKER's
# registration after T1, within TIMEOUT_S.
worker_registers_again() {
        wait_until "$3" first_line_after master "$2" "Worker ${WID[$1]} (re-)?registered" >/dev/null ||
                problem "the worker did not register again $4"
}

# no_executor_lost_since T0 [ONLY]: the driver lost no executor after T0,
# although ONLY (default: masters or ZooKeeper failed) happened.
no_executor_lost_since() {
        local lost
        lost=$(awk -v t0="$1" '$1 >= t0 && / Executor [0-9]+ on [^ ]+ lost: /' "$S/driver.log" | grep -c .)
        [ "$lost" -eq 0 ] || problem "$lost executors lost although only ${2:-masters or ZooKeeper failed}"
}

# --- SIGKILL of an executor: its socket disconnects ----------------------------------

inject_executor-kill() {
        local id pid t0
        read -r id pid <<<"$(pick_executor w1)" || { problem "no executor on w1 to kill"; return; }
        t0=$(now_us)
        kill -KILL "$pid"
        log "SIGKILL executor $id (pid $pid)"
        executor_loss "$id" "$t0" "driver" || return
        wait_until 30 running_executors_are "$APP_CORES" || problem "the lost executor was not replaced"
}

# --- SIGSTOP of an executor: heartbeat timeout -------------------------------------------

inject_executor-stop() {
        local id pid t0
        read -r id pid <<<"$(pick_executor w2)" || { problem "no executor on w2 to stop"; return; }
        t0=$(now_us)
        kill -STOP "$pid"
        log "SIGSTOP executor $id (pid $pid)"
        executor_loss "$id" "$t0" "driver" && {
                [[ $DETECT_WHAT == *"heartbeat timeout"* ]] ||
                        problem "a frozen executor was not found by heartbeat timeout ($DETECT_WHAT)"
                [ "$DETECT_MS" -le $((EXECUTOR_HEARTBEAT_TIMEOUT_MS * 3 / 2)) ] ||
                        problem "declared lost after $DETECT_MS ms (heartbeat timeout $EXECUTOR_HEARTBEAT_TIMEOUT_MS ms)"
        }
        kill -CONT "$pid" 2>/dev/null || true
        log "SIGCONT executor $id"
        # the daemons' exit guard ends a stuck cleanup after 5 s
        if ! wait_until 8 eval '! systemctl --user -q is-active "$(unit_of "$id")"'; then
                # what it is stuck on, for the report
                if command -v gdb >/dev/null && kill -0 "$pid" 2>/dev/null; then
                        timeout 30 gdb -p "$pid" -batch -ex 'thread apply all bt' >"$S/executor-$id-stacks.txt" 2>&1
                        log "executor $id still runs 8 s after SIGCONT: its stacks are in $S/executor-$id-stacks.txt"
                fi
                wait_until 12 eval '! systemctl --user -q is-active "$(unit_of "$id")"' ||
                        problem "the frozen executor's unit still runs 20 s after SIGCONT"
        fi
        wait_until 30 running_executors_are "$APP_CORES" || problem "the lost executor was not replaced"
}

# --- SIGKILL of a worker, restarted: its executors are re-adopted -------------------------

inject_worker-kill() {
        local t0 t1 n
        n=$(n_executors_on w1)
        t0=$(now_us)
        daemon_stop w1 KILL
        log "SIGKILL worker w1 (${WID[w1]}, $n executors); restarting it in 1 s"
        sleep 1
        t1=$(now_us)
        worker_start w1
        if detected 15 master "$t1" "Worker ${WID[w1]} re-registered"; then
                DETECT_WHAT="master: re-registered after restart, with $(message "$DETECT_LINE" | sed -E 's/.*, ([0-9]+ executors)$/\1/')"
        else
                undetected "master: not re-registered" "the restarted worker did not re-register"
        fi
        first_line_after w1 "$t1" "Adopted $n running executors" >/dev/null ||
                problem "the restarted worker did not re-adopt its $n executors"
        no_executor_lost_since "$t0" "their worker restarted"
}

# --- SIGSTOP of a worker past worker_timeout_ms, then SIGCONT -------------------------------

inject_worker-stop() {
        local t0 t1
        t0=$(now_us)
        daemon_signal w1 STOP
        log "SIGSTOP worker w1 (${WID[w1]})"
        worker_loss w1 "$t0" frozen && worker_lost_in_time
        wait_until 30 running_executors_are "$APP_CORES" || problem "the lost worker's executors were not replaced"
        t1=$(now_us)
        daemon_signal w1 CONT
        log "SIGCONT worker w1"
        worker_registers_again w1 "$t1" 15 "after SIGCONT"
}

# --- SIGSTOP of a worker and its executors (a frozen host), then SIGCONT ---------------------------
#
# The worker is declared lost and its executors replaced; once thawed, the
# executors must end by themselves (no kill can have reached them: their
# worker was frozen too).  Regression: an executor that ended itself after
# a SIGCONT could hang for ever in nng_close() (nng 1.5), outliving its app.

inject_host-freeze() {
        local t0 t1 id pid pids=() ids=() left
        while read -r id _; do
                pid=$(executor_main_pid "$id") && pids+=("$pid") && ids+=("$id")
        done < <(executors_on w2)
        t0=$(now_us)
        daemon_signal w2 STOP
        kill -STOP "${pids[@]}" 2>/dev/null
        log "SIGSTOP worker w2 (${WID[w2]}) and its executors ${ids[*]}"
        worker_loss w2 "$t0" frozen
        wait_until 30 eval '[ "$(n_executors_on w1)" -ge '"$APP_CORES"' ]' ||
                problem "the frozen worker's executors were not replaced on w1"
        t1=$(now_us)
        kill -CONT "${pids[@]}" 2>/dev/null
        daemon_signal w2 CONT
        log "SIGCONT worker w2 and its executors"
        # the daemons' exit guard ends a stuck cleanup after 5 s
        if ! wait_until 10 eval '! kill -0 '"${pids[*]}"' 2>/dev/null'; then
                left=$(for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && echo "$pid"; done | tr '\n' ' ')
                for pid in $left; do
                        command -v gdb >/dev/null &&
                                timeout 30 gdb -p "$pid" -batch -ex 'thread apply all bt' >"$S/executor-pid-$pid-stacks.txt" 2>&1
                done
                problem "thawed executors (pids $left) still run 10 s after SIGCONT; stacks in $S"
        fi
        worker_registers_again w2 "$t1" 15 "after SIGCONT"
}

# --- SIGKILL of the master, restarted: it restores from state_dir ---------------------------

inject_master-kill() {
        local t0 t1
        t0=$(now_us)
        daemon_stop master KILL
        log "SIGKILL master; restarting it in 0.5 s"
        sleep 0.5
        t1=$(now_us)
        master_start
        if detected 15 master "$t1" "Restored [0-9]+ applications"; then
                DETECT_WHAT="master: $(message "$DETECT_LINE" | sed -E 's/ from .*//') after restart"
        else
                undetected "master: nothing restored" "the restarted master restored nothing"
        fi
        wait_until 10 master_answers || problem "the restarted master does not answer"
        first_line_after master "$t1" "Launching executor" >/dev/null &&
                problem "the restarted master launched executors (it should have restored the running ones)"
        no_executor_lost_since "$t0" "the master restarted"
}

# --- one byte flipped in the middle of the master's journal -------------------------------
# Three applications (of fake drivers: their executors find no driver and the
# master removes them later) are registered while snapshots cannot be
# written, so that they are in state_dir/apps.journal only; the master is
# killed, one byte in the middle of the journal flipped, and the master
# started again.  Its checksum finds the damaged entry: the master names its
# offset, keeps the file aside, restores the others and says so; the job
# (restored from the snapshot) goes on.

# journal_frames FILE: "OFFSET SIZE" of each checksummed frame
journal_frames() {
        local f=$1 size off=0 b0 b1 b2 b3 n
        size=$(stat -c %s "$f")
        while [ $((size - off)) -ge 8 ]; do
                read -r b0 b1 b2 b3 < <(od -An -tu1 -j "$off" -N4 "$f")
                n=$((b0 | b1 << 8 | b2 << 16 | (b3 & 127) << 24))
                [ $((off + 8 + n)) -le "$size" ] || break
                echo "$off $((8 + n))"
                off=$((off + 8 + n))
        done
}

inject_journal-bitflip() {
        local state=$S/master-state journal i size mid off n hit="" t1 apps=0 restored
        journal=$state/apps.journal
        mkdir "$state/.state.pb.tmp"   # every snapshot fails: the journal is not emptied
        for i in 1 2 3; do
                "$SPARK_BUILD/tests/helpers/fake-driver" --master "$MASTER_URL" register --name "journal-$i" \
                        --driver-url "ipc://$S/nobody.sock" --max-cores 1 --memory 64 >/dev/null ||
                        problem "fake application $i was not registered"
        done
        daemon_stop master KILL
        rmdir "$state/.state.pb.tmp"
        size=$(stat -c %s "$journal" 2>/dev/null || echo 0)
        [ "$size" -gt 0 ] || { problem "the journal is empty"; DETECT_MS=-; DETECT_WHAT="nothing to damage"; master_start; return; }
        mid=$((size / 2))
        while read -r off n; do
                grep -aq 'journal-[123]' <(dd if="$journal" bs=1 skip="$off" count="$n" status=none) && apps=$((apps + 1))
                [ "$mid" -ge "$off" ] && [ "$mid" -lt $((off + n)) ] && hit=$off
        done < <(journal_frames "$journal")
        # the byte at the middle, flipped
        printf "$(printf '\\%03o' $(($(od -An -tu1 -j "$mid" -N1 "$journal") ^ 0xff)))" |
                dd of="$journal" bs=1 seek="$mid" conv=notrunc status=none
        log "flipped the byte at offset $mid of $size in the journal (the entry at $hit); restarting the master"
        t1=$(now_us)
        master_start
        if detected 15 master "$t1" "apps.journal: the entry at offset $hit is damaged"; then
                DETECT_WHAT="master: $(message "$DETECT_LINE" | sed -E 's/^.*apps.journal: //; s/;.*//')"
        else
                undetected "master: damage not reported" \
                        "the restarted master did not report the damaged entry at offset $hit"
        fi
        wait_until 10 master_answers || problem "the restarted master does not answer"
        first_line_after master "$t1" "apps.journal: restored [0-9]+ applications from [0-9]+ whole entries; 1 damaged" \
                >/dev/null || problem "the master did not say what it restored"
        ls "$journal".corrupt-* >/dev/null 2>&1 || problem "the damaged journal was not kept aside"
        # every whole application entry restored, the damaged one not
        restored=$(first_line_after master "$t1" "Restored [0-9]+ applications registered after" |
                sed -E 's/.*Restored ([0-9]+) applications registered after.*/\1/')
        [ "${restored:-0}" -ge $((apps - 1)) ] ||
                problem "restored ${restored:-0} applications from the journal; $((apps - 1)) entries were whole"
        first_line_after master "$t1" "Launching executor $APP/" >/dev/null &&
                problem "the restarted master launched executors of the job's application"
}

# --- an executor beyond MemoryMax ---------------------------------------------------------------

setup_memory-max() {
        # function-job task indexes whose first attempt allocates until killed
        HOG_TASKS="300 1100 1900"
}

inject_memory-max() {
        local i stamp line worst=-1 ms n_hogs=0
        for i in $HOG_TASKS; do
                n_hogs=$((n_hogs + 1))
                # the stamp file names the input number, not the index
                if ! wait_until 60 test -s "$S/stamps/hog-$((CMD_TASKS + i))"; then
                        problem "hog task $i never ran"
                        continue
                fi
                stamp=$(cat "$S/stamps/hog-$((CMD_TASKS + i))")
                if line=$(wait_line 30 driver "$stamp" "Executor [0-9]+ on [^ ]+ lost: "); then
                        ms=$(ms_between "$stamp" "${line%% *}")
                        [ "$ms" -gt "$worst" ] && worst=$ms
                        log "hog task $i: $(message "$line") ($ms ms)"
                else
                        problem "no executor lost after hog task $i started"
                fi
        done
        DETECT_MS=$([ "$worst" -ge 0 ] && echo "$worst" || echo -)
        DETECT_WHAT="driver: executor over MemoryMax lost (worst of $n_hogs, from the task's first allocation)"
        # systemd 252 on cgroup v1 reports the OOM kill as signal KILL (docs/DESIGN.md §12)
        wait_until 10 eval '[ "$(count_lines driver "stopped: .*(oom|signal KILL)")" -ge '"$n_hogs"' ]' ||
                problem "fewer than $n_hogs unit-stop events named the OOM kill (oom-kill or signal KILL)"
        wait_until 30 running_executors_are "$APP_CORES" || problem "the killed executors were not replaced"
}

# --- a full work_dir: launches there fail, the other worker takes them ------------------------------

setup_work-dir-full() {
        W_TMPFS[w1]=1
}

inject_work-dir-full() {
        local t0 id pid victims=()
        fill_fs "${WDIR[w1]}" || problem "could not fill w1's work_dir"
        log "filled w1's work_dir ${WDIR[w1]}: $(df -h --output=used,avail,iused,iavail "${WDIR[w1]}" | tail -n 1)"
        t0=$(now_us)
        while read -r id _; do
                pid=$(executor_main_pid "$id") && kill -KILL "$pid" && victims+=("$id")
        done < <(executors_on w1)
        log "SIGKILL w1's executors ${victims[*]}: their replacements must not start on w1"
        if detected 30 master "$t0" "launch refused by worker"; then
                DETECT_WHAT="master: $(message "$DETECT_LINE" | sed -E 's/.*(launch refused by worker: .*)/\1/; s/cannot launch executor [^ ]+ //')"
                [[ $DETECT_LINE == *"No space left on device"* ]] ||
                        problem "the refusal does not say the disk is full: $DETECT_LINE"
        else
                undetected "master: no refused launch" "no launch on the full worker was refused"
        fi
        wait_until 30 running_executors_are "$APP_CORES" ||
                problem "the app did not get back to $APP_CORES executors (on w2)"
        # regression: the full worker was picked again at once, for ever
        # (>100,000 refused launches in 30 s), until the master backed off
        local refused
        refused=$(count_lines master "launch refused by worker")
        [ "$refused" -le 10 ] || problem "a launch storm on the full worker: $refused launches refused"
}

# --- a worker cut off by its network namespace's link going down, then up -------------------------

setup_netns-cut() {
        W_NETNS[w2]=1
}

inject_netns-cut() {
        local t0 t1
        t0=$(now_us)
        netns_link down
        log "link of w2's namespace down"
        worker_loss w2 "$t0" cut-off && worker_lost_in_time
        wait_until 30 eval '[ "$(n_executors_on w1)" -ge '"$APP_CORES"' ]' ||
                problem "the cut-off worker's executors were not replaced on w1"
        sleep 1
        t1=$(now_us)
        netns_link up
        log "link of w2's namespace up"
        worker_registers_again w2 "$t1" 20 "once its link was up"
}

# --- SIGKILL of a driver without a state_dir, for good: a clear failure and nothing left behind ---
#
# Regression: the master kept a dead driver's app for ever, its executors
# replaced each time they failed to reach the driver.  Now it keeps it for
# driver_reconnect_ms, then removes it.

setup_driver-lost() {
        EXPECT_FAILURE=1
}

inject_driver-lost() {
        local t0
        t0=$(now_us)
        daemon_stop driver KILL
        log "SIGKILL driver"
        if detected 120 master "$t0" "Application $APP removed"; then
                DETECT_WHAT="master: $(message "$DETECT_LINE" | sed -E 's/^Application [^ ]+ removed/app removed/; s/ at [a-z+]+:[^ ]+//')"
        else
                undetected "master: application never removed" "the master kept the application of a dead driver"
        fi
}

# --- a driver with a state_dir killed (SIGKILL) or stopped (SIGTERM) and started again ---------
#
# It takes its application back; the executors keep their units and
# processes and register again; the jobs go on, and `sparkctl results`
# (in place of the submits, which may have given up on the driver) gives
# every result exactly once.

setup_driver-kill() {
        DRIVER_STATE=1
}

setup_driver-restart() {
        DRIVER_STATE=1
}

# "UNIT PID" of the app's executor units
unit_pids() {
        local u
        for u in $(units); do
                echo "$u $(unit_main_pid "$u")"
        done
}

driver_comes_back() {
        local sig=$1 t0 t1 line before cmd fn rc=0
        cmd=$(sparkctl jobs | awk '$2 == "cmd" { print $1 }')
        fn=$(sparkctl jobs | awk '$2 == "fn" { print $1 }')
        [ -n "$cmd" ] && [ -n "$fn" ] || { problem "the driver does not list the jobs cmd and fn"; return; }
        before=$(unit_pids)
        t0=$(now_us)
        daemon_stop driver "$sig" || rc=$?
        log "SIG$sig driver (exit $rc); starting it again"
        t1=$(now_us)
        driver_start
        if line=$(wait_line 30 driver "$t1" "Executor [0-9]+ registered from"); then
                DETECT_MS=$(ms_between "$t0" "${line%% *}")
                DETECT_WHAT="driver: SIG$sig, restarted, first executor back"
        else
                undetected "driver: no executor came back" "no executor registered with the restarted driver"
        fi
        first_line_after driver "$t1" "Restored from .*application $APP" >/dev/null ||
                problem "the restarted driver did not restore application $APP"
        # the submits may have given up on the driver: the results come from
        # `sparkctl results` instead, into the same files
        kill -TERM "$SUBMIT_CMD" "$SUBMIT_FN" 2>/dev/null || true
        wait "$SUBMIT_CMD" "$SUBMIT_FN" 2>/dev/null || true
        sparkctl results "$cmd" --json >"$S/cmd.json" 2>"$S/cmd.err" &
        SUBMIT_CMD=$!
        sparkctl results "$fn" --json >"$S/fn.json" 2>"$S/fn.err" &
        SUBMIT_FN=$!
        wait_until 20 eval '[ "$(logged_since driver "$t1" "Executor [0-9]+ registered from")" -ge '"$APP_CORES"' ]' ||
                problem "not all $APP_CORES executors registered again"
        [ "$before" = "$(unit_pids)" ] || problem "executor units or processes changed: before: $(tr '\n' ' ' <<<"$before") after: $(unit_pids | tr '\n' ' ')"
        [ "$(app_id)" = "$APP" ] || problem "the application is now $(app_id), not $APP"
}

logged_since() {
        awk -v t0="$2" -v re="$3" '$1 >= t0 && $0 ~ re' "$S/$1.log" | grep -c .
}

inject_driver-kill() {
        driver_comes_back KILL
}

inject_driver-restart() {
        driver_comes_back TERM
}

# --- standby masters on ZooKeeper (docs/ha.md) ------------------------------------------
#
# Two masters share the suite's 3-node ensemble (session timeout
# ZK_SESSION_TIMEOUT_MS); master leads, master2 stands by.  The jobs run on
# while the fault hits the masters or the ensemble.

# master2_elected TIMEOUT_S T0 WHAT WHEN: times master2's election after T0
# (WHAT for the report); else the problem that it was not elected WHEN.
master2_elected() {
        if detected "$1" master2 "$2" "Elected leader"; then
                DETECT_WHAT=$3
                return 0
        fi
        undetected "master2 never led" "master2 was not elected $4"
        return 1
}

# workers_follow_master2 TIMEOUT_S: both workers register with master2,
# each within TIMEOUT_S.
workers_follow_master2() {
        wait_until "$1" worker_registered w1 && wait_until "$1" worker_registered w2 ||
                problem "the workers did not register with master2"
}

# log_workers_followed T0 WHAT: when each worker left the old leader (for
# its silence, or for a standby's answer when it came back as one first) and
# registered with master2, in ms after T0 (from the workers' logs).
log_workers_followed() {
        local w left reg
        for w in w1 w2; do
                left=$(first_stamp_after "$w" "$1" "Master at $MASTER1_URL ") &&
                        left="left the leader after $(ms_between "$1" "$left") ms" || left="never left the leader"
                reg=$(first_stamp_after "$w" "$1" "Registered with master .* at $MASTER2_URL") &&
                        reg="registered with master2 after $(ms_between "$1" "$reg") ms" || reg="never registered with master2"
                log "$w: $left, $reg ($2)"
        done
}

setup_ha-leader-kill() { HA=1; }

# SIGKILL of the leader: its session expires, master2 reads the state and
# leads; the workers follow it with their executors.
inject_ha-leader-kill() {
        local t0
        t0=$(now_us)
        daemon_stop master KILL
        log "SIGKILL the leading master"
        master2_elected 30 "$t0" "master2 elected leader (session timeout ${ZK_SESSION_TIMEOUT_MS} ms)" \
                "after the leader's SIGKILL" || return
        wait_line 10 master2 "$t0" "Restored [0-9]+ applications" >/dev/null ||
                problem "master2 restored nothing from ZooKeeper"
        workers_follow_master2 15
        log_workers_followed "$t0" "after the SIGKILL"
        wait_until 15 running_executors_are "$APP_CORES" || problem "master2 does not list the running executors"
        first_line_after master2 "$t0" "Launching executor" >/dev/null &&
                problem "master2 launched executors (the running ones should have been reconciled)"
        no_executor_lost_since "$t0"
}

setup_ha-zk-one-down() { HA=1; }

# One ZooKeeper server of three killed: the quorum holds, nothing changes.
inject_ha-zk-one-down() {
        local t0
        t0=$(now_us)
        tests/harness/zk.sh kill "$ZK_DIR" 1
        log "SIGKILL ZooKeeper node 1"
        sleep $((ZK_SESSION_TIMEOUT_MS * 2 / 1000))
        first_line_after master "$t0" "Lost the ZooKeeper connection|No longer the leader" >/dev/null &&
                log "master moved to another ZooKeeper server (suspended a moment)"
        leads "$MASTER1_URL" || problem "master does not lead with 2 of 3 ZooKeeper servers"
        first_line_after master2 "$t0" "Elected leader" >/dev/null && problem "master2 took over"
        tests/harness/zk.sh restart "$ZK_DIR" 1
        tests/harness/zk.sh wait "$ZK_DIR" 1 || problem "ZooKeeper node 1 did not come back"
        DETECT_MS=- DETECT_WHAT="no change: master leads throughout"
        no_executor_lost_since "$t0"
}

setup_ha-zk-quorum-loss() { HA=1; }

# Two of three killed: no quorum.  The leader is suspended at once (places
# nothing, says so once and in sparkctl status), the cluster keeps running;
# when the servers are back it leads again by itself.
inject_ha-zk-quorum-loss() {
        local t0 line role
        t0=$(now_us)
        tests/harness/zk.sh kill "$ZK_DIR" 1
        tests/harness/zk.sh kill "$ZK_DIR" 2
        log "SIGKILL ZooKeeper nodes 1 and 2"
        suspended() {
                role=$("$SPARK_BUILD/sparkctl" --master "$MASTER1_URL" status --json 2>/dev/null | jq -r .master_role)
                [ "$role" = suspended ]
        }
        wait_until 15 suspended || problem "sparkctl status shows the leader as '$role', not suspended"
        sleep 1
        # The client may first move from a killed server to the last one,
        # which then drops it for want of a quorum: each outage is logged
        # once, however many reconnection attempts it takes.
        line=$(awk -v t0="$t0" '$1 >= t0 && /Lost the ZooKeeper connection/' "$S/master.log" | tail -n 1)
        if [ -n "$line" ]; then
                DETECT_MS=$(ms_between "$t0" "${line%% *}")
                DETECT_WHAT="leader suspended (no quorum)"
        else
                undetected "leader not suspended" "the leader did not notice the lost quorum"
        fi
        [ "$(count_lines master 'Lost the ZooKeeper connection')" -eq \
          $(($(count_lines master 'leading again') + 1)) ] || problem "the outage was not logged exactly once"
        suspended || problem "the leader did not stay suspended while there is no quorum"
        tests/harness/zk.sh restart "$ZK_DIR" 1
        tests/harness/zk.sh restart "$ZK_DIR" 2
        tests/harness/zk.sh wait "$ZK_DIR" 1 || problem "ZooKeeper node 1 did not come back"
        if wait_line 30 master "$t0" "leading again" >/dev/null; then
                log "the leader leads again"
        elif first_line_after master2 "$t0" "Elected leader" >/dev/null; then
                problem "the leader's session expired during the quorum loss; master2 took over"
        else
                problem "the leader did not lead again after the quorum came back"
        fi
        no_executor_lost_since "$t0"
}

setup_ha-rolling-restart() { HA=1; }

# Both masters restarted one after the other (SIGTERM, as systemctl restart
# does): first the standby, then the leader, whose session ends at once, so
# master2 leads without waiting for a timeout.
inject_ha-rolling-restart() {
        local t0
        daemon_stop master2 TERM || problem "master2 exited with a failure on SIGTERM"
        master_start master2
        wait_until 10 grep -q 'Standing for election' "$S/master2.log" || problem "master2 did not stand again"
        t0=$(now_us)
        daemon_stop master TERM || problem "master exited with a failure on SIGTERM"
        master2_elected 15 "$t0" "master2 leads after the leader's SIGTERM" "after the leader stopped"
        master_start master
        wait_until 10 grep -q 'Standing for election' "$S/master.log" || problem "master did not stand again"
        workers_follow_master2 15
        log_workers_followed "$t0" "after the leader's SIGTERM"
        no_executor_lost_since "$t0"
}

setup_ha-partition() { HA=1; M_NETNS=1; }

# launches NAME T0: the executors NAME launched from T0 on, as APP/N.
launches() {
        awk -v t0="$2" '$1 + 0 >= t0 + 0 && / Launching executor / {
                for (i = 1; i < NF; i++) if ($i == "executor") { sub(/:$/, "", $(i + 1)); print $(i + 1); break } }' \
                "$S/$1.log" | sort -u
}

# The leader cut off from ZooKeeper, the workers, the driver and master2 by
# a network partition (tc filters on its namespace's link, which stays up).
# It is suspended at once and places nothing; once the ensemble expires its
# session master2 leads, the workers and the driver follow it with their
# executors, and the jobs finish.  Healed, the old leader finds its session
# expired and exits with a failure, to start again as a standby.  Two
# masters launching the same executor fails the scenario.
inject_ha-partition() {
        local t0 both st=0
        t0=$(now_us)
        netns_partition || { problem "cannot install the partition's tc filters"; return; }
        log "the leader's namespace cut off by tc filters on $VETH_NS"
        wait_line 10 master "$t0" "Lost the ZooKeeper connection" >/dev/null ||
                problem "the cut-off leader did not notice it lost ZooKeeper"
        master2_elected 30 "$t0" "master2 elected leader (cut-off leader's session expired)" \
                "while the leader was cut off" || { netns_heal; return; }
        workers_follow_master2 20
        wait_until 20 running_executors_are "$APP_CORES" || problem "master2 does not list the running executors"
        netns_heal
        log "partition healed"
        if wait_line 20 master "$t0" "No longer the leader: its ZooKeeper session expired" >/dev/null; then
                wait_until 10 eval '! daemon_alive master'
                daemon_reap master || st=$?
                [ "$st" -ne 0 ] || problem "the deposed leader exited with status 0, not a failure"
                log "the old leader stepped down (status $st); started again as a standby"
                master_start master
                wait_until 15 grep -q 'Standing for election' "$S/master.log" ||
                        problem "the old leader did not stand again"
        else
                problem "the old leader did not step down once healed"
        fi
        [ -z "$(launches master "$t0")" ] ||
                problem "the cut-off leader launched $(launches master "$t0" | tr '\n' ' ') after the partition"
        both=$(comm -12 <(launches master "$t0") <(launches master2 "$t0") | tr '\n' ' ')
        [ -z "$both" ] || problem "both masters launched $both"
        no_executor_lost_since "$t0"
}

# --- a worker lost while executors are being taken back (fair share) -------------------
#
# The master shares fairly (preemption_timeout_ms 500).  The app holds 4 of
# the 8 cores when a second application of weight 3 comes: weighted DRF
# gives the app 2 and the newcomer 6, so two of the app's executors are
# taken back (drained).  As soon as the master logs the first, the worker
# that holds it dies with its executors, and comes back 1 s after the
# master declared it lost.  The app's tasks there run again elsewhere:
# nothing lost, nothing twice; the shares settle at DRF's targets.

setup_preempt-worker-lost() {
        MASTER_EXTRA='scheduling = "fair"; preemption_timeout_ms = 500;'
}

# executors_of_app APP: its live executors, from the master.
executors_of_app() {
        q '[.apps[] | select(.app_id == $a) | .executors_live] | max // 0' --arg a "$1"
}

inject_preempt-worker-lost() {
        local t0 t1 bp bep line victim w id b_app rc=0
        bp=$(free_port) && bep=$(free_port) || { problem "no free port for the second driver"; return; }
        {
                grep '^cluster:' "$S/cluster.conf"
                cat <<EOF
driver: { app_name = "fault-$SCENARIO-b"; listen = "tcp://$HOST_IP:$bp"; events_listen = "tcp://$HOST_IP:$bep";
          advertise_host = "$HOST_IP"; http_listen = ""; cores_per_executor = 1;
          executor_memory_mb = $EXECUTOR_MEMORY_MB; weight = 3; };
EOF
        } >"$S/driver-b.conf"
        t0=$(now_us)
        daemon_start driverb "$SPARK_BUILD/spark-driver" --config "$S/driver-b.conf"
        log "second application started (weight 3)"
        if ! line=$(wait_line 30 master "$t0" "Executor $APP/[0-9]+ on [^ ]+ taken back for "); then
                problem "the master took nothing back from $APP"
                daemon_stop driverb TERM
                return
        fi
        victim=$(message "$line" | sed -E 's/.* on ([^ ]+) taken back .*/\1/')
        w=w1
        [ "$victim" = "${WID[w1]}" ] || w=w2
        log "master: $(message "$line")"

        # the host of that worker dies: the daemon and its executors
        t1=$(now_us)
        daemon_stop "$w" KILL
        b_app=$(q '.apps[] | select(.name == $n) | .app_id' --arg n "fault-$SCENARIO-b")
        while read -r id _; do
                systemctl --user kill -s KILL "$(unit_of "$id")" 2>/dev/null || true
        done < <(executors "$APP" | awk -v w="${WID[$w]}" '$2 == w')
        while read -r id _; do
                systemctl --user kill -s KILL "spark-executor-$b_app-$id.service" 2>/dev/null || true
        done < <(executors "$b_app" | awk -v w="${WID[$w]}" '$2 == w')
        log "SIGKILL worker $w (${WID[$w]}) and its executors"
        worker_loss "$w" "$t1" dead mid-preemption
        sleep 1
        worker_start "$w"
        wait_until 15 worker_registered "$w" || problem "worker $w did not come back"
        # DRF's targets on 8 cores: the app 2, the newcomer 6
        if ! wait_until 30 eval '[ "$(executors_of_app "$APP")" = 2 ] && [ "$(executors_of_app "$b_app")" = 6 ]'; then
                problem "the shares did not settle at 2 and 6: $(executors_of_app "$APP") and $(executors_of_app "$b_app")"
        fi
        # the newcomer leaves: the app grows back for the rest of its jobs
        daemon_stop driverb TERM || rc=$?
        [ $rc -eq 0 ] || problem "the second driver exited with status $rc on SIGTERM"
        wait_until 30 running_executors_are "$APP_CORES" || problem "the app did not grow back to $APP_CORES executors"
}
