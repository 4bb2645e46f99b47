/* spark-deploy web UI: each page reads its daemon's /api/v1/ every two
 * seconds and redraws its tables; a banner says when the daemon stops
 * answering.  Text from the daemon is only ever set as text, never as HTML. */
"use strict";

const Spark = {
  el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v;
      else e.setAttribute(k, v);
    }
    for (const c of children) {
      if (c === null || c === undefined) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  },

  /* Only http(s) links from the daemon become links. */
  link(url, text) {
    if (typeof url === "string" && /^https?:\/\//.test(url))
      return Spark.el("a", { href: url }, text || url);
    return document.createTextNode(text || "");
  },

  state(s) {
    return Spark.el("span", { class: "state-" + String(s).replace(/[^a-z]/g, "") }, s);
  },

  mib(n) {
    if (n >= 1048576) return (n / 1048576).toFixed(1) + " TiB";
    if (n >= 1024) return (n / 1024).toFixed(1) + " GiB";
    return n + " MiB";
  },

  ms(n) {
    if (n < 1000) return n + " ms";
    if (n < 60000) return (n / 1000).toFixed(1) + " s";
    return Math.floor(n / 60000) + " min " + Math.round((n % 60000) / 1000) + " s";
  },

  /* Replaces the body of table #id with one row per item. */
  fill(id, items, row) {
    const body = document.querySelector("#" + id + " tbody");
    const rows = items.map((it) => {
      const tr = Spark.el("tr");
      for (const cell of row(it)) {
        /* {num: v}: a number, right-aligned (0 included) */
        const isNum = cell !== null && typeof cell === "object" && !(cell instanceof Node) && "num" in cell;
        const td = Spark.el("td", isNum ? { class: "num" } : {});
        const v = isNum ? cell.num : cell;
        td.append(v instanceof Node ? v : document.createTextNode(v === undefined ? "" : String(v)));
        tr.append(td);
      }
      return tr;
    });
    body.replaceChildren(...rows);
    const empty = document.getElementById(id + "-empty");
    if (empty) empty.hidden = items.length > 0;
  },

  progress(done, failed, running, total) {
    const bar = Spark.el("div", { class: "bar", role: "progressbar", "aria-valuenow": String(done),
                                  "aria-valuemax": String(total) });
    let left = 0;
    for (const [cls, n] of [["ok", done], ["failed", failed], ["running", running]]) {
      const w = total > 0 ? (100 * n) / total : 0;
      const s = Spark.el("span", { class: cls });
      s.style.left = left + "%";
      s.style.width = w + "%";
      left += w;
      bar.append(s);
    }
    return bar;
  },

  /* Calls draw(json) now and every 2 s; shows the banner on failure. */
  poll(url, draw) {
    const banner = document.getElementById("banner");
    const tick = async () => {
      try {
        const r = await fetch(url, { cache: "no-store" });
        if (!r.ok) throw new Error(url + ": HTTP " + r.status);
        draw(await r.json());
        banner.classList.remove("shown");
        document.body.dataset.updated = String(Date.now());
      } catch (e) {
        banner.textContent = "The daemon does not answer (" + e.message + "); retrying.";
        banner.classList.add("shown");
      }
    };
    tick();
    setInterval(tick, 2000);
  },
};
