#!/usr/bin/env bash
# The web UI's error banner in a real browser (headless Debian chromium,
# driven through chromedriver's WebDriver protocol): the master's page,
# loaded while the master answers, shows no banner; once the master is
# stopped the page, still open, says within a few refreshes that its daemon
# does not answer; once the master is back the banner goes by itself.  The
# screenshot of the page with its banner is kept in
# $SPARK_TEST_OUTPUT/test-browser-banner (default: the build dir's
# test-output/).
# shellcheck source=tests/harness/lib.sh
. "$(dirname "$0")/../harness/lib.sh"
# shellcheck source=tests/harness/obs.sh
. "$(dirname "$0")/../harness/obs.sh"
CHROMIUM=$(command -v chromium || command -v chromium-browser) || skip_all "chromium is not installed"
CHROMEDRIVER=$(command -v chromedriver) || skip_all "chromedriver is not installed (chromium-driver)"
command -v jq >/dev/null || skip_all "jq is not installed"
command -v curl >/dev/null || skip_all "curl is not installed"
require_programs spark-master sparkctl

T=$(harness_tmpdir)
obs_master_conf
start_master() {
        start_daemon "$1" "$SPARK_BUILD/spark-master" --config "$T/master.conf"
        wait_for quietly "$SPARK_BUILD/sparkctl" --master "ipc://$T/master.sock" status || die "the master does not answer"
}
start_master master

wd_port=$(free_port) || die "no free port"
WD=http://127.0.0.1:$wd_port
start_daemon chromedriver "$CHROMEDRIVER" --port="$wd_port"
wait_for quietly curl -sf "$WD/status" || die "chromedriver does not answer"

# wd METHOD PATH [JSON]: one WebDriver call; prints its "value"
wd() {
        local data=()
        [ $# -lt 3 ] || data=(--data "$3")
        curl -s -X "$1" -H 'Content-Type: application/json' "${data[@]}" "$WD$2" | jq -c '.value'
}
caps=$(jq -nc --arg bin "$CHROMIUM" --arg profile "$T/chromium-profile" '{capabilities: {alwaysMatch: {
        browserName: "chrome", "goog:chromeOptions": {binary: $bin,
        args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--window-size=1400,1000",
               ("--user-data-dir=" + $profile)]}}}}')
sid=$(wd POST /session "$caps" | jq -r '.sessionId // empty')
[ -n "$sid" ] || die "chromedriver started no session: $(tail -n 3 "$(daemon_log chromedriver)")"

# js EXPR: the value of a JavaScript expression in the page
js() { wd POST "/session/$sid/execute/sync" "$(jq -nc --arg e "return $1;" '{script: $e, args: []}')" | jq -r '.'; }
banner_class() { js 'document.getElementById("banner").className'; }
banner_shown() { [[ " $(banner_class) " == *" shown "* ]]; }
workers_table_drawn() { [ "$(js 'document.getElementById("workers") !== null')" = true ]; }

wd POST "/session/$sid/url" "$(jq -nc --arg u "$MASTER_HTTP/" '{url: $u}')" >/dev/null
check "the master's page loads and draws its tables" wait_for workers_table_drawn
check_fails "while the master answers, no banner" banner_shown

stop_daemon master TERM || true
check "the master stopped, the open page shows its banner" wait_for banner_shown
check_match "the banner says the daemon does not answer" "does not answer" \
        "$(js 'document.getElementById("banner").textContent')"
out=${SPARK_TEST_OUTPUT:-$SPARK_BUILD/test-output}/test-browser-banner
rm -rf "$out" && mkdir -p "$out"
wd GET "/session/$sid/screenshot" | jq -r '.' | base64 -d >"$out/master-down.png" 2>/dev/null
check "the screenshot of the banner is kept in $out" test -s "$out/master-down.png"

start_master master-again
banner_gone() { ! banner_shown; }
check "the master back, the banner goes by itself" wait_for banner_gone
# the browser goes with its session (chromedriver, a daemon of the test, is
# stopped with the others)
wd DELETE "/session/$sid" >/dev/null 2>&1 || true
