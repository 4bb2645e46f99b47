#!/usr/bin/env bash
# The worker's transient-unit layer (daemons/worker/test-executor-unit.c, a
# libcheck test) against the harness's real systemd user manager.
# shellcheck source=tests/harness/lib.sh
. "$(dirname "$0")/../harness/lib.sh"
require_user_manager

t=$SPARK_BUILD/tests/test-executor-unit
[ -x "$t" ] || die "$t is not built"
check "executor units start, report their outcome and are re-adopted (libcheck)" "$t"
