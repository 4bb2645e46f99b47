"use strict";
Spark.poll("/api/v1/status", (s) => {
  const workers = [...s.workers].sort((a, b) => a.worker_id.localeCompare(b.worker_id));
  const running = s.apps.filter((a) => a.state === "running" || a.state === "waiting");
  const finished = s.apps.filter((a) => a.state !== "running" && a.state !== "waiting");
  document.getElementById("master-id").textContent = s.master_id;
  document.getElementById("summary").textContent =
    workers.length + " workers, " + running.length + " running applications, " + s.executors.length + " executors";
  Spark.fill("workers", workers, (w) => [
    Spark.link(w.ui_url, w.worker_id), w.host, Spark.state(w.state),
    { num: w.cores_used + " / " + w.cores }, { num: Spark.mib(w.memory_used_mb) + " / " + Spark.mib(w.memory_mb) },
    { num: Spark.ms(w.last_heartbeat_ms_ago) + " ago" },
  ]);
  Spark.fill("running-apps", running, (a) => [
    a.app_id, a.name, Spark.state(a.state),
    { num: a.max_cores > 0 ? a.cores_granted + " / " + a.max_cores : String(a.cores_granted) },
    { num: Spark.mib(a.executor_memory_mb) }, Spark.link(a.ui_url, a.ui_url || a.driver_url),
  ]);
  Spark.fill("executors", s.executors, (e) => [
    e.app_id + "/" + e.executor_id, e.worker_id, Spark.state(e.state), { num: e.cores }, { num: Spark.mib(e.memory_mb) },
    e.unit, e.unit ? Spark.el("code", {}, "journalctl -u " + e.unit) : "",
  ]);
  Spark.fill("finished-apps", finished, (a) => [a.app_id, a.name, Spark.state(a.state), a.reason]);
});
