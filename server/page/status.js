// The firn status page: reads /v1/status every REFRESH ms and shows it.
// Everything the server sends is inserted as text (textContent) or as SVG
// geometry computed from numbers; the page runs under a
// Content-Security-Policy of default-src 'self' with no inline code.
"use strict";
(function () {
  const REFRESH = 2000;
  const TOKEN = "firn-status-token";
  let sortDesc = false;
  let last = null;

  const $ = (id) => document.getElementById(id);
  const text = (id, v) => { $(id).textContent = v === undefined || v === null || v === "" ? "–" : String(v); };

  function headers() {
    const t = sessionStorage.getItem(TOKEN);
    return t ? { Authorization: "Bearer " + t } : {};
  }

  function duration(ms) {
    if (ms === undefined || ms === null) return "–";
    const neg = ms < 0; ms = Math.abs(ms);
    let s;
    if (ms < 1000) s = ms + " ms";
    else if (ms < 120000) s = (ms / 1000).toFixed(1) + " s";
    else if (ms < 7200000) s = Math.round(ms / 60000) + " min";
    else if (ms < 172800000) s = Math.round(ms / 3600000) + " h";
    else if (ms < 63072000000) s = Math.round(ms / 86400000) + " days";
    else s = Math.round(ms / 31557600000) + " years";
    return neg ? "−" + s : s;
  }
  const when = (ms) => (ms ? new Date(ms).toISOString().replace(".000Z", "Z") : "–");

  async function refresh() {
    let resp;
    try {
      resp = await fetch("/v1/status", { headers: headers(), cache: "no-store" });
    } catch (e) {
      text("updated", "the server did not answer");
      return;
    }
    if (resp.status === 401 || resp.status === 403) {
      $("login").hidden = false;
      text("updated", resp.status === 403 ? "this token lacks scope status" : "a token with scope status is needed");
      return;
    }
    if (!resp.ok) {
      text("updated", "the server answered " + resp.status);
      return;
    }
    $("login").hidden = true;
    const doc = await resp.json();
    last = doc;
    render(doc);
  }

  function render(d) {
    const sf = d.snowflake;
    text("node", sf ? sf.node : "snowflake off");
    text("layout", sf ? sf.layout : "–");
    const r = $("ready");
    r.textContent = d.ready ? "ready" : "not ready";
    r.className = "state " + (d.ready ? "ready" : "not-ready");
    $("not-ready").hidden = d.ready;
    $("not-ready").textContent = d.not_ready || "";
    text("version", d.version + (d.commit && d.commit !== "unknown" ? " " + d.commit.slice(0, 12) : ""));
    text("uptime", duration(d.uptime_ms));
    renderLayout(sf);
    renderRate(d.rate);
    renderLease(d.lease, d.now_ms);
    renderTags(d.tags);
    renderErrors(d.errors);
    text("updated", "read at " + when(d.now_ms));
    document.body.dataset.now = String(d.now_ms);
    if (!performance.getEntriesByName("firn-rendered").length) performance.mark("firn-rendered");
  }

  function renderLayout(sf) {
    $("bits-section").hidden = !sf;
    if (!sf) return;
    const bits = $("bits");
    bits.replaceChildren();
    for (const b of sf.bits) {
      const s = document.createElement("span");
      s.className = b.part;
      s.style.flexGrow = String(b.bits);
      s.textContent = b.name + " " + b.bits;
      s.title = b.name + ": " + b.bits + " bits";
      bits.append(s);
    }
    text("per-second", Math.round(sf.ids_per_second_per_node));
    text("nodes", sf.nodes);
    text("last", when(sf.last_ms - sf.tick_ms)); // last_ms ends the last tick; its IDs carry its start
    text("remaining", duration(sf.remaining_ms));
    text("offset", duration(sf.clock_offset_ms));
  }

  function renderRate(rate) {
    const modes = ["snowflake", "segment"];
    let peak = 0, n = 0;
    for (const m of modes) {
      const xs = rate.per_second[m] || [];
      n = Math.max(n, xs.length);
      for (const v of xs) peak = Math.max(peak, v);
    }
    const top = peak > 0 ? peak : 1;
    for (const m of modes) {
      const xs = rate.per_second[m] || [];
      const pts = xs.map((v, i) => (xs.length > 1 ? (i * 600) / (xs.length - 1) : 0).toFixed(1) + "," + (150 - (v / top) * 140).toFixed(1));
      $("line-" + m).setAttribute("points", pts.join(" "));
      text("rate-" + m, m in rate.per_second ? (xs.length ? xs[xs.length - 1] : 0) : "not shown in opaque mode");
      $("rate-" + m + "-unit").hidden = !(m in rate.per_second);
    }
    text("rate-peak", peak);
    text("rate-span", duration(n * 1000));
  }

  function renderLease(l, now) {
    const ids = ["lease-store", "lease-id", "lease-ttl", "lease-expires", "lease-renewed", "lease-renewals", "hwm", "headroom"];
    if (!l) {
      for (const id of ids) text(id, "");
      text("lease-store", "no lease (static node, or snowflake off)");
      return;
    }
    text("lease-store", l.store + (l.held ? "" : " — lost: " + (l.error || "")));
    text("lease-id", l.lease_id);
    text("lease-ttl", l.ttl_granted_ms ? duration(l.ttl_granted_ms) : "");
    text("lease-expires", l.held && l.last_renewal_ms ? duration(l.expires_in_ms) : "");
    text("lease-renewed", l.last_renewal_ms ? when(l.last_renewal_ms) : "");
    text("lease-renewals", l.renewals);
    text("hwm", when(l.hwm_ms));
    text("headroom", duration(l.headroom_ms));
    // The time line: from one TTL (or 10 s) before now to past the later
    // of expiry and HWM.
    const span = Math.max(l.ttl_granted_ms || 10000, 1000);
    const from = now - span;
    const expiry = l.last_renewal_ms && l.ttl_granted_ms ? l.last_renewal_ms + l.ttl_granted_ms : now;
    const to = Math.max(expiry, l.hwm_ms, now) + span / 4;
    const x = (t) => Math.min(600, Math.max(0, ((t - from) / (to - from)) * 600));
    const lease = $("tl-lease");
    const start = l.last_renewal_ms || now;
    lease.setAttribute("x", x(start).toFixed(1));
    lease.setAttribute("width", l.held ? Math.max(0, x(expiry) - x(start)).toFixed(1) : "0");
    const hwm = $("tl-hwm");
    hwm.setAttribute("x", x(now).toFixed(1));
    hwm.setAttribute("width", Math.max(0, x(l.hwm_ms) - x(now)).toFixed(1));
    const nx = x(now).toFixed(1);
    $("tl-now").setAttribute("x1", nx);
    $("tl-now").setAttribute("x2", nx);
  }

  function renderTags(tags) {
    const rows = tags.slice().sort((a, b) => (sortDesc ? b.left - a.left : a.left - b.left) || (a.tag < b.tag ? -1 : 1));
    const body = $("tags").tBodies[0];
    body.replaceChildren();
    for (const t of rows) {
      const tr = document.createElement("tr");
      const cells = [
        t.tag, t.left, t.prefetched, t.step,
        t.opaque ? "opaque" : t.current.end > t.current.start ? "[" + t.current.start + ", " + t.current.end + ")" : "–",
        t.opaque ? "opaque" : t.next.end > t.next.start ? "[" + t.next.start + ", " + t.next.end + ")" : "–",
        t.last_fetch_ms ? when(t.last_fetch_ms) : "–",
        t.fetch_latency_ms.toFixed(1) + " ms",
        t.healthy ? "ok" : "failing",
        t.errors + (t.last_error ? ": " + t.last_error : ""),
      ];
      cells.forEach((v, i) => {
        const td = document.createElement("td");
        td.textContent = String(v);
        if (i === 0) td.className = "tag";
        if (i === 8) td.className = t.healthy ? "" : "bad";
        tr.append(td);
      });
      tr.dataset.tag = t.tag;
      body.append(tr);
    }
    $("no-tags").hidden = tags.length > 0;
    $("sort-left").textContent = "left " + (sortDesc ? "▼" : "▲");
  }

  function renderErrors(errs) {
    const ul = $("errors");
    ul.replaceChildren();
    for (const e of errs) {
      const li = document.createElement("li");
      li.textContent = when(Date.parse(e.time)) + " " + e.source + ": " + e.message + (e.count > 1 ? " (×" + e.count + ")" : "");
      ul.append(li);
    }
    $("no-errors").hidden = errs.length > 0;
  }

  async function decode(ev) {
    ev.preventDefault();
    const id = $("decode-id").value.trim();
    const enc = $("decode-encoding").value;
    const out = $("decoded"), bad = $("decode-error");
    out.hidden = true; bad.hidden = true;
    if (!id) return;
    let resp;
    try {
      resp = await fetch("/v1/snowflake/decode/" + encodeURIComponent(id) + "?encoding=" + encodeURIComponent(enc), { headers: headers() });
    } catch (e) {
      bad.textContent = "the server did not answer";
      bad.hidden = false;
      return;
    }
    const body = await resp.json().catch(() => ({}));
    if (!resp.ok) {
      bad.textContent = (body.error && body.error.message) || body.message || ("the server answered " + resp.status);
      bad.hidden = false;
      return;
    }
    const parts = [["ID", body.id], ["time", body.time], ["tick", body.tick]];
    for (const [k, v] of Object.entries(body.node || {})) parts.push([k, v]);
    parts.push(["sequence", body.sequence]);
    out.replaceChildren();
    for (const [k, v] of parts) {
      const div = document.createElement("div");
      const dt = document.createElement("dt");
      const dd = document.createElement("dd");
      dt.textContent = k;
      dd.textContent = String(v);
      dd.dataset.part = k;
      div.append(dt, dd);
      out.append(div);
    }
    out.hidden = false;
  }

  function login(ev) {
    ev.preventDefault();
    const t = $("token").value.trim();
    if (t) sessionStorage.setItem(TOKEN, t);
    $("token").value = "";
    refresh();
  }

  document.addEventListener("DOMContentLoaded", () => {
    $("decode").addEventListener("submit", decode);
    $("login").addEventListener("submit", login);
    $("sort-left").addEventListener("click", () => {
      sortDesc = !sortDesc;
      if (last) renderTags(last.tags);
    });
    refresh();
    setInterval(refresh, REFRESH);
  });
})();
