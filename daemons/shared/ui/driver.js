"use strict";
let picked = null;

function pick(id) {
  picked = id;
  location.hash = id;
  drawTasks();
}

async function drawTasks() {
  if (!picked) return;
  const r = await fetch("/api/v1/jobs/" + encodeURIComponent(picked) + "/tasks", { cache: "no-store" });
  if (!r.ok) return;
  const t = await r.json();
  document.getElementById("tasks-title").textContent =
    "Tasks of " + t.job.job_id + (t.tasks_listed < t.job.tasks ? " (the first " + t.tasks_listed + ")" : "");
  document.getElementById("tasks-hint").hidden = true;
  Spark.fill("tasks", t.tasks, (k) => [
    { num: k.task }, Spark.state(k.state), { num: k.attempts }, { num: k.failures },
    k.executor_id >= 0 ? String(k.executor_id) : "",
  ]);
}

if (location.hash.length > 1) picked = decodeURIComponent(location.hash.slice(1));

Spark.poll("/api/v1/status", (s) => {
  document.getElementById("app").textContent = s.app_id + " (" + s.app_name + ")";
  document.getElementById("summary").textContent = s.executors + " executors, " + s.cores + " cores";
});
Spark.poll("/api/v1/jobs", (l) => {
  Spark.fill("jobs", l.jobs, (j) => {
    const a = Spark.el("a", { href: "#" + j.job_id }, j.job_id);
    a.addEventListener("click", (ev) => { ev.preventDefault(); pick(j.job_id); });
    return [a, j.name, Spark.state(j.state), Spark.progress(j.done, j.failed, j.running, j.tasks),
            { num: j.done }, { num: j.failed }, { num: j.running }, { num: j.tasks }, { num: Spark.ms(j.elapsed_ms) },
            j.reason];
  });
  drawTasks();
});
