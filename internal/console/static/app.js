// The console's page: plain JavaScript, no build step. Views are chosen by
// the URL fragment (#overview, #hosts, #host/NAME, #nodes, #proxy,
// #actions); the overview is live over server-sent events.
"use strict";

const $ = (sel) => document.querySelector(sel);
const views = ["overview", "hosts", "host", "nodes", "proxy", "actions"];
const state = {
  hosts: { q: "", sort: "host", order: "asc", offset: 0, limit: 50, total: 0 },
  host: "",
  charts: null,
  series: { t: [], pages: [], bytes: [] },
  events: null,
  info: { views: {} },
};

// ---- formatting ----
const nf = new Intl.NumberFormat();
function num(n) { return n == null ? "–" : nf.format(Math.round(n * 10) / 10); }
function bytes(n) {
  if (n == null) return "–";
  const u = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return (i ? n.toFixed(1) : n) + " " + u[i];
}
function dur(sec) {
  if (sec == null) return "–";
  sec = Math.max(0, Math.round(sec));
  const h = Math.floor(sec / 3600), m = Math.floor((sec % 3600) / 60), s = sec % 60;
  return (h ? h + " h " : "") + (h || m ? m + " min " : "") + s + " s";
}
function ns(n) { return n == null ? "–" : n >= 1e9 ? (n / 1e9).toFixed(2) + " s" : Math.round(n / 1e6) + " ms"; }
function when(t) { return t ? new Date(t).toLocaleString() : "–"; }
function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text != null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}
function row(cells) {
  const tr = document.createElement("tr");
  for (const c of cells) {
    const td = c instanceof Node ? (c.tagName === "TD" ? c : wrap(c)) : el("td", c);
    tr.appendChild(td);
  }
  return tr;
}
function wrap(n) { const td = document.createElement("td"); td.appendChild(n); return td; }
function fill(tbody, rows, empty, cols) {
  tbody.replaceChildren(...rows);
  if (!rows.length && empty) {
    const td = el("td", empty);
    td.colSpan = cols;
    tbody.appendChild(row([td]));
  }
}
function say(text, bad) {
  const m = $("#msg");
  m.textContent = text;
  m.className = bad ? "error" : "";
}

// ---- API ----
async function get(path) {
  const r = await fetch(path, { headers: { Accept: "application/json" } });
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw Object.assign(new Error(body.error || r.statusText), { status: r.status });
  return body;
}
function token() { return sessionStorage.getItem("courtesy-token") || ""; }
async function act(path, body, done) {
  const r = await fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: "Bearer " + token() },
    body: JSON.stringify(body || {}),
  });
  const out = await r.json().catch(() => ({}));
  if (!r.ok) {
    say("Refused (" + r.status + "): " + (out.error || r.statusText), true);
    return null;
  }
  say(done);
  return out;
}

// ---- overview ----
function setText(id, v) { const e = document.getElementById(id); if (e) e.textContent = v; }
function showOverview(o) {
  setText("state", o.state + (o.paused ? " (paused)" : ""));
  setText("pages", num(o.pages));
  setText("pages-per-s", num(o.pages_per_s));
  setText("bytes", bytes(o.bytes));
  setText("bytes-per-s", bytes(o.bytes_per_s) + "/s");
  setText("queued", num(o.queued));
  setText("in-flight", num(o.in_flight));
  setText("hosts", num(o.hosts));
  setText("active-hosts", num(o.active_hosts));
  setText("retired-hosts", num(o.retired_hosts));
  setText("errors", num(o.errors));
  setText("trap-hits", num(o.trap_hits));
  setText("duplicates", num(o.duplicates));
  setText("start", when(o.start));
  setText("elapsed", o.start ? dur(o.elapsed_s) : "–");
  setText("eta", o.eta_s == null ? "–" : dur(o.eta_s));
  const w = $("#waiting");
  if (o.state === "waiting" && o.waiting_until) {
    w.textContent = "Waiting: everything left is in delay or backoff until " + when(o.waiting_until) + ".";
    w.hidden = false;
  } else {
    w.hidden = true;
  }
  $("#pause").disabled = !!o.paused;
  $("#resume").disabled = !o.paused;
  bars($("#status-table tbody"), o.status);
  bars($("#mime-table tbody"), o.mime);
}
function bars(tbody, counts) {
  const entries = Object.entries(counts || {}).sort((a, b) => b[1] - a[1]).slice(0, 20);
  const top = entries.length ? entries[0][1] : 1;
  fill(tbody, entries.map(([k, v]) => {
    const td = el("td");
    const b = el("span", null, "bar");
    b.style.width = Math.max(1, Math.round((v / top) * 120)) + "px";
    b.setAttribute("aria-hidden", "true");
    td.append(b, document.createTextNode(num(v)));
    return row([k, td]);
  }), "none yet", 2);
}
function chartOpts(label, fmt, width) {
  return {
    width: width, height: 180,
    series: [{}, { label: label, stroke: "#0b4f9c", width: 2, fill: "rgba(11,79,156,0.12)", value: (u, v) => v == null ? "–" : fmt(v) }],
    axes: [{}, { values: (u, vals) => vals.map(fmt), size: 70 }],
    scales: { x: { time: true } },
    legend: { show: true },
  };
}
function chartWidth(id) { return Math.max(280, document.getElementById(id).clientWidth || 320); }
function initCharts() {
  if (state.charts || typeof uPlot === "undefined") return;
  const s = state.series;
  state.charts = {
    pages: new uPlot(chartOpts("pages/s", (v) => num(v), chartWidth("chart-pages")), [s.t, s.pages], $("#chart-pages")),
    bytes: new uPlot(chartOpts("bytes/s", (v) => bytes(v), chartWidth("chart-bytes")), [s.t, s.bytes], $("#chart-bytes")),
  };
  window.addEventListener("resize", () => {
    state.charts.pages.setSize({ width: chartWidth("chart-pages"), height: 180 });
    state.charts.bytes.setSize({ width: chartWidth("chart-bytes"), height: 180 });
  });
}
function redraw() {
  if (!state.charts) return;
  const s = state.series;
  state.charts.pages.setData([s.t, s.pages]);
  state.charts.bytes.setData([s.t, s.bytes]);
}
function addPoint(o) {
  const s = state.series;
  const t = Math.floor(new Date(o.time).getTime() / 1000);
  if (s.t.length && t <= s.t[s.t.length - 1]) return;
  s.t.push(t); s.pages.push(o.pages_per_s); s.bytes.push(o.bytes_per_s);
  if (s.t.length > 3600) { s.t.shift(); s.pages.shift(); s.bytes.shift(); }
  redraw();
}
async function loadOverview() {
  const o = await get("/api/overview?history=1");
  const h = o.history || { t: [], pages_per_s: [], bytes_per_s: [] };
  state.series = { t: h.t || [], pages: h.pages_per_s || [], bytes: h.bytes_per_s || [] };
  initCharts();
  redraw();
  showOverview(o);
  live();
}
function live() {
  if (state.events || typeof EventSource === "undefined") return;
  const es = new EventSource("/api/events");
  es.addEventListener("overview", (ev) => {
    const o = JSON.parse(ev.data);
    showOverview(o);
    addPoint(o);
  });
  es.onerror = () => { say("Live updates interrupted; retrying…", true); };
  es.onopen = () => { if ($("#msg").textContent.startsWith("Live updates")) say(""); };
  state.events = es;
}

// ---- hosts ----
async function loadHosts() {
  const h = state.hosts;
  const qs = new URLSearchParams({ q: h.q, sort: h.sort, order: h.order, offset: h.offset, limit: h.limit });
  const p = await get("/api/hosts?" + qs);
  h.total = p.total;
  fill($("#hosts-table tbody"), p.rows.map((r) => {
    const a = el("a", r.host);
    a.href = "#host/" + encodeURIComponent(r.host);
    const pol = r.politeness || {};
    const next = pol.next_allowed || r.blocked_until;
    const robots = r.robots ? r.robots.result + (r.robots.status ? " " + r.robots.status : "") + ", " + dur(r.robots.age_s) + " old" : "not fetched";
    return row([a, num(r.queued), num(r.in_flight), num(r.fetched), next ? when(next) : "now",
      r.politeness ? ns(pol.delay_ns) + " (" + pol.delay_source + ")" : "–", robots, r.retired || ""]);
  }), "no hosts", 8);
  for (const th of document.querySelectorAll("#hosts-table th")) {
    const b = th.querySelector("button");
    if (!b) continue;
    if (b.dataset.sort === h.sort) th.setAttribute("aria-sort", h.order === "asc" ? "ascending" : "descending");
    else th.removeAttribute("aria-sort");
  }
  const last = Math.min(h.offset + h.limit, h.total);
  setText("page-info", h.total ? "Hosts " + num(h.offset + 1) + "–" + num(last) + " of " + num(h.total) : "No hosts");
  $("#prev-page").disabled = h.offset === 0;
  $("#next-page").disabled = last >= h.total;
}

// ---- one host ----
async function loadHost(name) {
  state.host = name;
  setText("h-host", "Host " + name);
  $("#delay-key").value = name;
  let d;
  try {
    d = await get("/api/hosts/" + encodeURIComponent(name));
  } catch (e) {
    $("#host-detail").hidden = true;
    $("#host-missing").hidden = false;
    if (e.status !== 404) say(e.message, true);
    return;
  }
  $("#host-detail").hidden = false;
  $("#host-missing").hidden = true;
  const st = $("#host-stats");
  st.replaceChildren();
  const pol = d.politeness || {};
  for (const [k, v] of [["Queued", num(d.queued)], ["In flight", num(d.in_flight)], ["Fetched", num(d.fetched)],
    ["Blocked until", d.blocked_until ? when(d.blocked_until) : "–"], ["Next allowed", pol.next_allowed ? when(pol.next_allowed) : "now"],
    ["Delay", d.politeness ? ns(pol.delay_ns) + " (" + pol.delay_source + ")" : "–"], ["Backoff level", num(pol.backoff_level)],
    ["Retired", d.retired || "no"]]) {
    const div = el("div");
    div.append(el("dt", k), el("dd", v));
    st.appendChild(div);
  }
  const pre = $("#robots-body");
  pre.replaceChildren();
  const r = d.robots;
  if (!r) {
    setText("robots-info", "No robots.txt fetched yet.");
  } else {
    setText("robots-info", r.origin + "/robots.txt: " + r.result + (r.status ? " (HTTP " + r.status + ")" : "") +
      ", fetched " + when(r.fetched) + " (" + dur(r.age_s) + " ago). Highlighted: the group for “" + r.agent + "”.");
    const inGroup = (n) => (r.group || []).some((g) => n >= g.from && n <= g.to);
    r.body.split("\n").forEach((line, i) => {
      const span = el("span", null, inGroup(i + 1) ? "line hl" : "line");
      span.append(el("span", i + 1, "ln"), document.createTextNode(line));
      pre.appendChild(span);
    });
  }
  fill($("#decisions-table tbody"), ((r && r.decisions) || []).map((v) =>
    row([v.url, v.allowed ? "yes" : "no", v.line || "–", v.rule || v.reason || ""])), "no queued URLs", 4);
  fill($("#head-table tbody"), d.queue_head.map((e) =>
    row([e.url, e.priority, e.depth, e.due ? when(e.due) : "now", e.leased ? "yes" : "no"])), "empty", 5);
  fill($("#recent-table tbody"), d.recent.map((f) =>
    row([when(f.time), f.status, bytes(f.size), f.mime || "", ns(f.duration_ns), f.url])), "none in the log's tail", 6);
}

// ---- nodes, proxy, actions ----
async function loadNodes() {
  let n;
  try { n = await get("/api/nodes"); } catch (e) { fill($("#nodes-table tbody"), [], e.message, 15); return; }
  setText("nodes-summary", n.live + " live, " + n.dead + " dead (a node is dead after " + dur(n.dead_after_s) +
    " without a heartbeat, or sooner when its cluster says so)");
  fill($("#nodes-table tbody"), n.nodes.map((x) =>
    row([x.id, x.role || "this process", x.addr || x.host || "", x.pid || "", x.version || "", x.crawl_id || "",
      x.cpu.toFixed(2), x.cpu_seconds ? dur(x.cpu_seconds) : "–", bytes(x.rss_bytes), num(x.goroutines), num(x.pages_per_s),
      num(x.in_flight), when(x.last_seen),
      x.dead ? el("td", "dead (" + dur(x.silence_s) + " silent)", "dead") : "alive", x.last_error || ""])), "no nodes", 15);
  $("#crawls-wrap").hidden = !n.crawls;
  if (n.crawls) {
    fill($("#crawls-table tbody"), n.crawls.map((c) =>
      row([c.crawl_id, num(c.queued), num(c.in_flight), num(c.completed), num(c.queues), num(c.active_queues),
        num(c.retired_urls), num(c.retired_queues)])), "no crawl", 8);
  }
}
async function loadProxy() {
  const st = $("#proxy-stats");
  st.replaceChildren();
  $("#proxy-none").hidden = !!state.info.views.proxy;
  if (state.info.views.proxy) {
    const p = await get("/api/proxy");
    $("#proxy-none").hidden = true;
    for (const [k, v] of [["Requests", num(p.requests)], ["Requests/s", num(p.requests_per_s)], ["Waits", num(p.waits)],
      ["403 answers", num(p.forbidden_403)], ["429 answers", num(p.too_many_429)],
      ["Cache hit ratio", p.cache_hit_ratio == null ? "–" : Math.round(p.cache_hit_ratio * 100) + " %"], ["Open tunnels", num(p.open_tunnels)]]) {
      const div = el("div");
      div.append(el("dt", k), el("dd", v));
      st.appendChild(div);
    }
    fill($("#clients-table tbody"), Object.entries(p.clients).sort((a, b) => b[1] - a[1]).map(([c, n]) => row([c, num(n)])), "none", 2);
    fill($("#trace-table tbody"), p.trace.map((t) =>
      row([when(t.time), t.client, t.method + " " + t.url, t.outcome, t.status || "", ns(t.wait_ns)])), "none", 6);
  }
  if (!state.info.views.politeness) return;
  try {
    const d = await get("/api/delays");
    fill($("#delays-table tbody"), d.delays.map((x) =>
      row([x.key, x.has_manual ? ns(x.manual_ns) + (x.override ? " (wins)" : "") : "–", x.robots_ns ? ns(x.robots_ns) : "–", ns(x.current_ns), when(x.updated)])),
    "no manual or robots delays", 5);
  } catch (e) {
    fill($("#delays-table tbody"), [], e.message, 5);
  }
}
async function loadActions() {
  const a = await get("/api/actions");
  fill($("#actions-table tbody"), a.actions.map((x) =>
    row([when(x.time), x.action, x.remote + (x.token_id ? " (token " + x.token_id + ")" : " (no token)"), x.detail || "",
      x.status + (x.error ? ": " + x.error : "")])), "no actions yet", 5);
}

// ---- routing ----
async function route() {
  const hash = decodeURIComponent(location.hash.slice(1)) || "overview";
  let view = hash.split("/")[0];
  if (!views.includes(view)) view = "overview";
  for (const v of views) document.getElementById("view-" + v).hidden = v !== view;
  say("");
  for (const a of document.querySelectorAll("nav a")) {
    if (a.dataset.view === view || (view === "host" && a.dataset.view === "hosts")) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  try {
    switch (view) {
      case "overview": await loadOverview(); break;
      case "hosts": await loadHosts(); break;
      case "host": await loadHost(hash.slice(5)); break;
      case "nodes": await loadNodes(); break;
      case "proxy": await loadProxy(); break;
      case "actions": await loadActions(); break;
    }
    document.body.dataset.view = view;
  } catch (e) {
    say(e.message, true);
  }
}

async function loadInfo() {
  try {
    state.info = await get("/api/info");
  } catch (e) {
    say(e.message, true);
    return;
  }
  const v = state.info.views;
  const hide = { hosts: !v.hosts, nodes: !v.nodes };
  for (const a of document.querySelectorAll("nav a")) {
    a.parentElement.hidden = !!hide[a.dataset.view];
  }
  $("#seeds-form").hidden = !v.hosts;
  $(".controls").hidden = !v.hosts;
  $("#loglevel-form").hidden = !state.info.log_level;
  if (state.info.log_level) $("#loglevel").value = state.info.log_level.toLowerCase();
  $("#seeds").previousElementSibling.textContent = "URLs, one per line (at most " + num(state.info.max_seeds) + ")";
}

async function setup() {
  await loadInfo();
  $("#token").value = token();
  $("#token-form").addEventListener("submit", (e) => {
    e.preventDefault();
    sessionStorage.setItem("courtesy-token", $("#token").value.trim());
    say("Token kept for this tab.");
  });
  $("#pause").addEventListener("click", async () => {
    if (await act("/api/pause", {}, "Paused: no new fetches start.")) showOverview(await get("/api/overview"));
  });
  $("#resume").addEventListener("click", async () => {
    if (await act("/api/resume", {}, "Resumed.")) showOverview(await get("/api/overview"));
  });
  $("#seeds-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const urls = $("#seeds").value.split("\n").map((s) => s.trim()).filter(Boolean);
    const out = await act("/api/seeds", { urls }, "Seeds sent.");
    if (out) say(out.added + " of " + out.received + " seeds were new.");
  });
  $("#loglevel-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    await act("/api/log-level", { level: $("#loglevel").value }, "Log level set to " + $("#loglevel").value + ".");
  });
  $("#hosts-search").addEventListener("submit", (e) => {
    e.preventDefault();
    Object.assign(state.hosts, { q: $("#hosts-q").value.trim(), limit: +$("#hosts-limit").value, offset: 0 });
    loadHosts().catch((err) => say(err.message, true));
  });
  $("#hosts-limit").addEventListener("change", () => $("#hosts-search").requestSubmit());
  for (const b of document.querySelectorAll("#hosts-table th button")) {
    b.addEventListener("click", () => {
      const h = state.hosts;
      if (h.sort === b.dataset.sort) h.order = h.order === "asc" ? "desc" : "asc";
      else Object.assign(h, { sort: b.dataset.sort, order: b.dataset.sort === "host" ? "asc" : "desc" });
      h.offset = 0;
      loadHosts().catch((err) => say(err.message, true));
    });
  }
  $("#prev-page").addEventListener("click", () => {
    state.hosts.offset = Math.max(0, state.hosts.offset - state.hosts.limit);
    loadHosts().catch((err) => say(err.message, true));
  });
  $("#next-page").addEventListener("click", () => {
    state.hosts.offset += state.hosts.limit;
    loadHosts().catch((err) => say(err.message, true));
  });
  $("#delay-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const key = $("#delay-key").value.trim();
    const body = { key, delay: $("#delay-value").value.trim(), override: $("#delay-override").checked };
    if (await act("/api/delay", body, "Delay of " + key + " set to " + body.delay + ".")) loadHost(state.host);
  });
  $("#delay-clear").addEventListener("click", async () => {
    const key = $("#delay-key").value.trim();
    if (await act("/api/delay", { key, clear: true }, "Delay of " + key + " cleared.")) loadHost(state.host);
  });
  $("#block-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    if (await act("/api/block", { host: state.host, for: $("#block-for").value.trim() }, state.host + " blocked.")) loadHost(state.host);
  });
  $("#unblock").addEventListener("click", async () => {
    if (await act("/api/unblock", { host: state.host }, state.host + " unblocked.")) loadHost(state.host);
  });
  $("#retire-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    if (await act("/api/retire", { host: state.host, reason: $("#retire-reason").value.trim() }, state.host + " retired.")) loadHost(state.host);
  });
  window.addEventListener("hashchange", route);
  route();
}

document.addEventListener("DOMContentLoaded", setup);
