#!/usr/bin/env bash
# The web UI in a real browser (headless Debian chromium), while a job runs
# (docs/observability.md): the master's page shows the worker rows, the
# application and its executors with their units and journalctl lines; the
# driver's page shows the running job with its progress bar and counts, and
# a job's tasks with their attempts; the worker's page its executor.  No
# page logs a JavaScript error.  The screenshots are kept in
# $SPARK_TEST_OUTPUT/test-browser (default: the build dir's test-output/),
# since the test's temporary directory goes when it passes.
# shellcheck source=tests/harness/lib.sh
. "$(dirname "$0")/../harness/lib.sh"
# shellcheck source=tests/harness/obs.sh
. "$(dirname "$0")/../harness/obs.sh"
CHROMIUM=$(command -v chromium || command -v chromium-browser) || skip_all "chromium is not installed"

obs_cluster_start 2
check "both executors run" wait_until 30 obs_executors_running 2
SHOTS=$T/screenshots
mkdir -p "$SHOTS"

# browse NAME URL: the DOM after the page's scripts ran, in $T/NAME.html,
# the browser's console in $T/NAME.log, a screenshot in $SHOTS/NAME.png
# shellcheck disable=SC2054  # the window size is WIDTH,HEIGHT
browse() {
        local name=$1 url=$2 flags=(--headless --no-sandbox --disable-gpu --no-first-run
                --user-data-dir="$T/chromium-profile" --window-size=1400,1000 --virtual-time-budget=4000
                --enable-logging=stderr --v=0)
        timeout 90 "$CHROMIUM" "${flags[@]}" --dump-dom "$url" >"$T/$name.html" 2>"$T/$name.log" || return 1
        timeout 90 "$CHROMIUM" "${flags[@]}" --screenshot="$SHOTS/$name.png" "$url" >/dev/null 2>>"$T/$name.log" ||
                return 1
}
# js_errors NAME: the JavaScript errors the page logged
js_errors() {
        grep -E 'CONSOLE|Uncaught|SyntaxError|TypeError|ReferenceError' "$T/$name.log" | grep -Ei 'error|uncaught' || true
}
# dom NAME PYTHON-EXPR: evaluates an expression over the DOM (html.parser;
# t(id) is the text of the element with that id, rows(id) the rows of that
# table's body as lists of cell texts)
dom() {
        python3 - "$T/$1.html" "$2" <<'PY'
import html.parser, sys
class P(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(); self.stack = []; self.ids = {}; self.tables = {}; self.cur = None
        self.attrs_by_id = {}; self.progress = []
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "div" and a.get("role") == "progressbar":
            self.progress.append(a)
        self.stack.append((tag, a.get("id")))
        if a.get("id"):
            self.ids[a["id"]] = ""; self.attrs_by_id[a["id"]] = a
        if tag == "table": self.cur = a.get("id"); self.tables[self.cur] = []
        if tag == "tr" and self.cur and any(t == "tbody" for t, _ in self.stack): self.tables[self.cur].append([])
        if tag == "td" and self.cur and self.tables[self.cur]: self.tables[self.cur][-1].append("")
    def handle_endtag(self, tag):
        while self.stack:
            t, _ = self.stack.pop()
            if t == tag: break
        if tag == "table": self.cur = None
    def handle_data(self, d):
        for _, i in self.stack:
            if i: self.ids[i] += d
        if self.cur and self.tables[self.cur] and self.tables[self.cur][-1] and any(t == "td" for t, _ in self.stack):
            self.tables[self.cur][-1][-1] += d
p = P(); p.feed(open(sys.argv[1]).read())
t = lambda i: p.ids.get(i, "")
rows = lambda i: p.tables.get(i, [])
cls = lambda i: p.attrs_by_id.get(i, {}).get("class", "")
progress = p.progress
print(eval(sys.argv[2]))
PY
}

# the detector of JavaScript errors finds one where there is one
browse broken "data:text/html,<p>x</p><script>no_such_function()</script>"
check "a page with a JavaScript error is caught" test -n "$(name=broken js_errors)"

# a job of 60 tasks of 2 s on 4 cores: about 30 s, the pages are read while it runs
"$SPARKCTL" submit --name slow-job --command 'sleep 2; echo {#}' --count 60 >"$T/job.out" 2>&1 &
job=$!
check "the job is running" wait_until 20 sh -c "'$SPARKCTL' jobs --json | jq -e '.jobs[0].state == \"running\" and .jobs[0].done > 0' >/dev/null"

check "the driver's page loads" browse driver "$DRIVER_HTTP/"
check_eq "driver: no JavaScript error" "" "$(name=driver js_errors)"
check_eq "driver: the job, running" "slow-job running" "$(dom driver '" ".join(r[1] + " " + r[2] for r in rows("jobs"))')"
check "driver: its progress bar says part of 60 tasks is done" \
        test "$(dom driver 'int(progress[0]["aria-valuenow"]) if progress and progress[0]["aria-valuemax"] == "60" and 0 < int(progress[0]["aria-valuenow"]) < 60 else -1')" -gt 0
check_eq "driver: succeeded, failed and running counts" 1 \
        "$(dom driver '(lambda r: 1 if int(r[4]) > 0 and r[5] == "0" and int(r[6]) > 0 and r[7] == "60" else 0)(rows("jobs")[0])')"

check "the master's page loads" browse master "$MASTER_HTTP/"
check_eq "master: no JavaScript error" "" "$(name=master js_errors)"
check_eq "master: two worker rows" 2 "$(dom master 'len(rows("workers"))')"
check_eq "master: both workers alive" "alive alive" "$(dom master '" ".join(r[2] for r in rows("workers"))')"
check_eq "master: each worker links its own page" 2 \
        "$(grep -Eo '<a href="http://127\.0\.0\.1:[0-9]+">worker-' "$T/master.html" | sort -u | wc -l)"
check_eq "master: the running application" "observed running" \
        "$(dom master '" ".join(r[1] + " " + r[2] for r in rows("running-apps"))')"
check_match "master: the application links the driver's page" "href=\"$DRIVER_HTTP\"" "$(cat "$T/master.html")"
check_eq "master: two executors with their journalctl lines" 2 \
        "$(dom master 'sum(1 for r in rows("executors") if r[6] == "journalctl -u " + r[5] and r[5].startswith("spark-executor-"))')"
check_eq "master: no error banner" "banner" "$(dom master 'cls("banner")')"

jobid=$("$SPARKCTL" jobs --json | jq -r '.jobs[0].job_id')
check "the driver's page of the job's tasks loads" browse tasks "$DRIVER_HTTP/#$jobid"
check_eq "tasks: no JavaScript error" "" "$(name=tasks js_errors)"
check_eq "tasks: 60 task rows" 60 "$(dom tasks 'len(rows("tasks"))')"
check "tasks: each row has its state and attempts" \
        test "$(dom tasks 'sum(1 for r in rows("tasks") if r[1] in ("pending", "running", "succeeded") and r[2] in ("0", "1"))')" = 60

check "the worker's page loads" browse worker "${WORKER_HTTP[1]}/"
check_eq "worker: no JavaScript error" "" "$(name=worker js_errors)"
check_eq "worker: its executor, running" "running" "$(dom worker '" ".join(r[1] for r in rows("executors"))')"

wait "$job"
check_eq "the job then succeeds" 60 "$(grep -c . "$T/job.out")"
for s in master driver tasks worker; do
        check "screenshot of the $s page" test -s "$SHOTS/$s.png"
done
out=${SPARK_TEST_OUTPUT:-$SPARK_BUILD/test-output}/test-browser
rm -rf "$out" && mkdir -p "$out" && cp "$SHOTS"/*.png "$T"/*.html "$out"/
check "the screenshots are kept in $out" test -s "$out/master.png"
