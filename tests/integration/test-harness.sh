#!/usr/bin/env bash
# The harness itself: a real systemd user manager reachable over sd-bus, whose
# transient units report their outcome through signals, log to the journal,
# and get cgroup limits, all inside the harness's own cgroup subtree.
# shellcheck source=tests/harness/lib.sh
. "$(dirname "$0")/../harness/lib.sh"

host_cgroups_before=$(cat /proc/1/cgroup /proc/$$/cgroup)
require_user_manager

probe=$SPARK_BUILD/tests/helpers/transient-unit-probe
[ -x "$probe" ] || die "$probe is not built (make test-helpers)"
tmp=$(harness_tmpdir)
token=hello-from-probe-$$-$RANDOM

# A unit that logs a line and exits 3: outcome taken from JobRemoved +
# PropertiesChanged.  journald reads a stream client's cgroup (hence its unit)
# when it handles the line; if the process is gone by then the entry has no
# _SYSTEMD_UNIT (seen on a busy machine), so the unit waits, for at most 10 s,
# until journald has stored the line before it exits.
cat >"$tmp/emit.sh" <<'EOF'
echo "$1"
i=0
while [ $i -lt 100 ] && ! journalctl --no-pager -q -o cat --since "@$2" SYSLOG_IDENTIFIER=sh |
        grep -qx -- "$1"; do
        sleep 0.1
        i=$((i + 1))
done
exit 3
EOF
rc=0
"$probe" --timeout 20 /bin/sh "$tmp/emit.sh" "$token" "$TEST_T0" >"$tmp/probe1.out" 2>&1 || rc=$?
check_eq "probe reports its outcome (exit status)" 0 "$rc"
out=$(cat "$tmp/probe1.out")
unit=$(sed -n 's/^unit=//p' "$tmp/probe1.out")
check_match "the job completed" '^job=done$' "$out"
check_match "exit 3 seen as result=exit-code status=3" '^result=exit-code status=3$' "$out"

# Its stdout reached the journal, attributed to the unit.
check "the unit's stdout is in the journal (journalctl -u)" wait_for journal_grep "$unit" "^$token\$"
check_match "... and under _SYSTEMD_UNIT= and SYSLOG_IDENTIFIER=" "$token" \
        "$(journalctl --no-pager -q -o cat _SYSTEMD_UNIT="$unit" SYSLOG_IDENTIFIER=sh)"

# CollectMode=inactive-or-failed: the failed unit is gone already.
check_eq "the failed transient unit was garbage-collected" "not-found" \
        "$(systemctl --user show -p LoadState --value "$unit")"

# A unit killed by a signal ("$$" is systemd's escape for "$").
"$probe" --timeout 20 /bin/sh -c 'kill -9 $$$$' >"$tmp/probe2.out" 2>&1
check_match "SIGKILL seen as result=signal status=9" '^result=signal status=9$' "$(cat "$tmp/probe2.out")"

# Resource properties are accepted (the memory controller is delegated) ...
check "systemd-run -p MemoryMax=50M is accepted and runs" \
        timeout 30 systemd-run --user --quiet --wait -p MemoryMax=50M true
# ... and enforced: reading 300 MB into memory under a 32 MiB limit gets the
# process killed (Result=oom-kill on cgroup v2; on the hybrid layout of the
# test machines systemd 252 reports Result=signal, status 9).
"$probe" --timeout 30 --memory-max $((32 << 20)) \
        /bin/bash -c 'exec tail -n 1 < <(head -c 300000000 /dev/zero)' >"$tmp/probe3.out" 2>&1
check_match "MemoryMax is enforced" '^result=(oom-kill|signal) status=9$' "$(cat "$tmp/probe3.out")"

# Units live in the harness's cgroup subtree, not the machine's.
sleeper=harness-sleep-$$.service
stop_user_units_on_exit "$sleeper"
systemd-run --user --quiet --unit="$sleeper" sleep 60
pid=$(systemctl --user show -p MainPID --value "$sleeper")
check "a unit's process has a main PID" [ "${pid:-0}" -gt 0 ]
if [ -n "${SPARK_TEST_CGROUP:-}" ]; then
        check_match "it runs inside the harness's cgroups" \
                "^[0-9]+:name=systemd:/$SPARK_TEST_CGROUP/app.slice/$sleeper\$" \
                "$(cat "/proc/$pid/cgroup" 2>/dev/null)"
else    # a session's manager (SPARK_TEST_USE_SESSION=1)
        check_match "it runs in its own cgroup" "/app.slice/$sleeper\$" "$(cat "/proc/$pid/cgroup" 2>/dev/null)"
fi
stop_user_units "$sleeper"
check "stopping a unit kills its process" wait_for eval "! kill -0 $pid 2>/dev/null"

check_eq "the machine's processes were not moved between cgroups" "$host_cgroups_before" \
        "$(cat /proc/1/cgroup /proc/$$/cgroup)"
