#!/usr/bin/env bash
# master.scheduling = "fair": three applications share a cluster of three
# workers of 4 cores by weighted DRF, and the ones that come later get their
# share through preemption, taken as a drain of executors.  The driver of A
# has task_max_failures = 1, so that a single failed attempt would fail its
# job.
#
#  1. A (weight 1) starts alone and gets all 12 executors; a job of 300 tasks
#     of 50 ms runs on them.
#  2. B (weight 1) and C (weight 2) start.  After preemption_timeout_ms (1 s)
#     the master takes executors back from A; A's driver releases each once
#     it holds no task.  The executor counts converge to DRF's targets (3, 3
#     and 6, computed here independently by progressive filling), each share
#     within 10% of the cluster of its target, with no executor left being
#     taken back.
#  3. A's job succeeds, every task ok from its first attempt; B and C run a
#     job each on what they got.  The master logged each preemption with its
#     MESSAGE_ID, and sparkctl status shows the shares.
# shellcheck source=tests/harness/lib.sh
. "$(dirname "$0")/../harness/lib.sh"
require_real_cluster

T=$(harness_tmpdir)
SPARKCTL=$SPARK_BUILD/sparkctl
for n in A:1 B:1 C:2; do
        real_driver_conf "${n%:*}" 'cores_per_executor = 1; executor_memory_mb = 128; task_max_failures = 1;
          locality_wait_ms = 0; weight = '"${n#*:}"';'
done

status_json() {
        "$SPARKCTL" status --json 2>/dev/null
}
# live executors of the application named N
executors_of() {
        status_json | jq -r --arg n "$1" '[.apps[] | select(.name == $n) | .executors_live] | max // 0'
}
# tasks done by the job named J of the driver of application N
job_done() {
        "$SPARKCTL" --driver "$(driver_url "$1")" jobs --json 2>/dev/null |
                jq -r --arg j "$2" '[.jobs[] | select(.name == $j) | .done] | max // 0'
}
job_started() {
        [ "$(job_done "$1" "$2")" -ge "$3" ]
}

# Weighted DRF's targets, by progressive filling written here apart from the
# master's: one executor at a time to the lowest weighted dominant share
# (the earliest on a tie) whose next executor fits.  Args: CORES MEMORY_MB
# then NAME:WEIGHT:CORES_PER_EXECUTOR:MEMORY_PER_EXECUTOR...; prints NAME=N.
drf_targets() {
        python3 - "$@" <<'PY'
import sys
from fractions import Fraction
cap = [int(sys.argv[1]), int(sys.argv[2])]
apps = [a.split(":") for a in sys.argv[3:]]
apps = [(n, int(w), [int(c), int(m)]) for n, w, c, m in apps]
count = [0] * len(apps)
left = cap[:]
active = set(range(len(apps)))
def share(i):
    _, w, per = apps[i]
    return max(Fraction(count[i] * per[r], cap[r]) for r in range(2)) / w
while active:
    i = min(active, key=lambda k: (share(k), k))
    per = apps[i][2]
    if any(per[r] > left[r] for r in range(2)):
        active.discard(i)
        continue
    count[i] += 1
    left = [left[r] - per[r] for r in range(2)]
for (n, _, _), c in zip(apps, count):
    print(f"{n}={c}")
PY
}
targets=$(drf_targets 12 6144 A:1:1:128 B:1:1:128 C:2:1:128)
check_eq "DRF's targets, computed here" "A=3 B=3 C=6" "$(echo $targets)"
eval "$targets"

# shares_converged: every app holds its target, each share (executors over
# the cluster's 12 cores) within 0.10 of its target's, none being taken back
shares_converged() {
        local s
        s=$(status_json) || return 1
        jq -e --argjson a "$A" --argjson b "$B" --argjson c "$C" '
                [.apps[] | {n: .name, e: .executors_live, p: .executors_preempting, t: .executors_target}] as $apps
                | ({A: $a, B: $b, C: $c}) as $want
                | ($apps | length) == 3
                  and all($apps[]; ((.e - $want[.n]) / 12 | fabs) <= 0.10 and .p == 0 and .t == $want[.n])' \
                <<<"$s" >/dev/null
}

stop_user_units_on_exit 'spark-executor-*'
real_cluster 3 --cores 4 --master 'scheduling = "fair"; preemption_timeout_ms = 1000;'

# --- 1. A alone takes the whole cluster
start_real_driver A
check "A gets all 12 executors" wait_until 60 eval '[ "$(executors_of A)" = 12 ]'
"$SPARKCTL" --driver "$(driver_url A)" submit --name long --json --command 'sleep 0.05; echo {#}' \
        --count 300 >"$T/a.out" 2>"$T/a.err" &
submit=$!
check "A's job is under way" wait_until 60 job_started A long 12

# --- 2. B and C come: preemption gives them their shares
start_real_driver B
start_real_driver C
check "the shares converge to DRF's targets (A=$A B=$B C=$C)" wait_until 60 shares_converged
check "the master logged each preemption with its MESSAGE_ID" \
        eval '[ "$(logged EXECUTOR_PREEMPTED master)" -ge $((12 - A)) ]'
check "A's driver released the executors taken back when idle" grep -q "is idle: released" "$(daemon_log driverA)"

# --- 3. nothing failed
rc=0
wait "$submit" || rc=$?
check_eq "A's job succeeds" 0 "$rc"
check_eq "300 results" 300 "$(wc -l <"$T/a.out")"
check_eq "no task failed or ran twice" "" "$(jq -c 'select(.status != "ok" or .attempts != 1)' "$T/a.out")"
for n in B C; do
        check "$n runs a job on its executors" \
                quietly "$SPARKCTL" --driver "ipc://$T/driver-$n.sock" submit --command 'echo {#}' --count 20
done
table=$("$SPARKCTL" status 2>&1)
check_match "sparkctl status shows weight, share, executors and demand" \
        'APPLICATION +NAME +STATE +CORES +EXECUTORS +WEIGHT +SHARE +TARGET +DEMAND' "$table"
check_match "... C at half the cluster, its fair share" ' C +running +6 +6 +2 +50%/50% +6 +any ' "$table"
check_eq "status --json says the master schedules fairly" fair "$(status_json | jq -r .scheduling)"
