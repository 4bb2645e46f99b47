"use strict";
Spark.poll("/api/v1/status", (s) => {
  document.getElementById("worker").textContent = s.worker_id + " on " + s.host;
  document.getElementById("summary").textContent =
    s.cores + " cores, " + Spark.mib(s.memory_mb) + (s.registered ? ", registered" : ", not registered");
  Spark.fill("executors", s.executors, (e) => [
    e.app_id + "/" + e.executor_id, Spark.state(e.state), { num: e.cores }, { num: Spark.mib(e.memory_mb) },
    { num: e.memory_bytes !== undefined ? Spark.mib(Math.round(e.memory_bytes / 1048576)) : "" },
    { num: e.cpu_usec !== undefined ? (e.cpu_usec / 1e6).toFixed(2) + " s" : "" },
    e.unit, e.unit ? Spark.el("code", {}, "journalctl -u " + e.unit) : "",
  ]);
});
