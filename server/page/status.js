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

  // group writes a count with a comma between groups of three digits, as
  // the CLI does (internal/digits): 4,096,000.
  function group(n) {
    if (typeof n !== "number" || !Number.isFinite(n)) return String(n);
    let s = BigInt(Math.round(Math.abs(n))).toString();
    for (let i = s.length - 3; i > 0; i -= 3) s = s.slice(0, i) + "," + s.slice(i);
    return (n < 0 ? "−" : "") + s;
  }
  // The browser test holds group to the CLI's rule on the same inputs.
  window.firnGroup = group;

  // pieces fills el with s as text, cut after separators (- _ . : /) and
  // at spaces, each piece in a span of its own: a long name wraps between
  // its parts, never inside one, and a part too long for the line is
  // ellipsised (the full text is el's title).
  function pieces(el, s) {
    el.replaceChildren();
    el.title = s;
    for (const word of s.split(/(\s+)/)) {
      if (!word) continue;
      if (/^\s+$/.test(word)) {
        el.append(" ");
        continue;
      }
      word.match(/[^-_.:/]*[-_.:/]+|[^-_.:/]+$/g).forEach((p, i) => {
        if (i) el.append(document.createElement("wbr"));
        const span = document.createElement("span");
        span.className = "piece";
        span.textContent = p;
        el.append(span);
      });
    }
  }

  const SVG = "http://www.w3.org/2000/svg";
  function svgEl(name, attrs, content) {
    const e = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, typeof v === "number" ? v.toFixed(1) : v);
    if (content !== undefined) e.textContent = content;
    return e;
  }

  // size gives an SVG a view box of its size on screen, so that one unit
  // is one pixel and its labels are never stretched.
  function size(svg, w, h) {
    const W = svg.clientWidth || w, H = svg.clientHeight || h;
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    return [W, H];
  }

  // niceStep is 1, 2 or 5 × 10^k: the smallest that cuts span into at
  // most parts steps.
  function niceStep(span, parts) {
    const raw = span / parts, p = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5]) if (m * p >= raw) return m * p;
    return 10 * p;
  }

  // timeStep is the shortest of the usual clock steps (ms) that cuts span
  // into at most parts steps.
  function timeStep(span, parts) {
    const steps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400].map((s) => s * 1000);
    return steps.find((s) => span / s <= parts) || steps[steps.length - 1];
  }

  // offset writes a whole number of seconds, minutes or hours.
  const offset = (ms) => (ms % 3600000 === 0 ? ms / 3600000 + " h" : ms % 60000 === 0 ? ms / 60000 + " min" : ms / 1000 + " s");

  // xTick adds a tick at x with its label, unless the label would stick
  // out of the chart or reach left of minX.
  function xTick(g, x, top, bottom, minX, W, label) {
    const half = label.length * 3.3;
    if (x - half < minX || x + half > W) return;
    const t = svgEl("g", { class: "tick x" });
    t.append(svgEl("line", { x1: x, x2: x, y1: top, y2: bottom + 4 }), svgEl("text", { x: x, y: bottom + 16, "text-anchor": "middle" }, label));
    g.append(t);
  }

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
    const st = d.starting;
    text("node", sf ? group(sf.node) : st ? "none yet" : "snowflake off");
    text("layout", sf ? sf.layout : "–");
    const r = $("ready");
    r.textContent = d.ready ? "ready" : st ? "starting" : "not ready";
    r.className = "state " + (d.ready ? "ready" : "not-ready");
    $("not-ready").hidden = d.ready;
    pieces($("not-ready"), d.not_ready || "");
    text("version", d.version + (d.commit && d.commit !== "unknown" ? " " + d.commit.slice(0, 12) : ""));
    text("uptime", duration(d.uptime_ms));
    // While the process starts, only why, on which store and how long:
    // it has no node, lease, rate or tags yet.
    for (const s of document.querySelectorAll("main > section")) s.hidden = st ? s.id !== "starting" : s.id === "starting";
    if (st) {
      text("starting-store", st.store);
      text("starting-wait", duration(st.waiting_ms));
      text("updated", "read at " + when(d.now_ms));
      document.body.dataset.now = String(d.now_ms);
      return;
    }
    renderLayout(sf);
    renderRate(d.rate);
    renderLease(d.lease, d.now_ms);
    renderTags(d.tags, d.now_ms);
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
    text("per-second", group(sf.ids_per_second_per_node));
    text("nodes", group(sf.nodes));
    text("last", when(sf.last_ms - sf.tick_ms)); // last_ms ends the last tick; its IDs carry its start
    text("remaining", duration(sf.remaining_ms));
    text("offset", duration(sf.clock_offset_ms));
  }

  // renderRate draws IDs per second: a y scale of counts from 0, and UTC
  // clock times along x (point i is the second that ends
  // (n-1-i) seconds before end_ms).
  function renderRate(rate) {
    const modes = ["snowflake", "segment"];
    let peak = 0, n = 0;
    for (const m of modes) {
      const xs = rate.per_second[m] || [];
      n = Math.max(n, xs.length);
      for (const v of xs) peak = Math.max(peak, v);
    }
    const svg = $("chart");
    const [W, H] = size(svg, 600, 160);
    const step = Math.max(1, niceStep(Math.max(peak, 1), 4));
    const top = Math.max(step, Math.ceil(peak / step) * step);
    const values = [];
    for (let v = 0; v <= top; v += step) values.push(v);
    const L = Math.max(...values.map((v) => group(v).length), 3) * 7 + 10, R = 8, T = 8, B = H - 22;
    const y = (v) => B - ((B - T) * v) / top;
    const t1 = rate.end_ms, t0 = t1 - Math.max(n - 1, 1) * 1000;
    const x = (t) => L + ((W - L - R) * (t - t0)) / (t1 - t0);
    const axes = $("chart-axes");
    axes.replaceChildren();
    for (const v of values) {
      const t = svgEl("g", { class: "tick y" });
      t.append(svgEl("line", { x1: L - 4, x2: W - R, y1: y(v), y2: y(v) }),
        svgEl("text", { x: L - 7, y: y(v) + 4, "text-anchor": "end" }, group(v)));
      axes.append(t);
    }
    const every = timeStep(t1 - t0, Math.max(1, Math.floor((W - L - R) / 80)));
    for (let t = Math.ceil(t0 / every) * every; t <= t1; t += every) {
      xTick(axes, x(t), T, B, L - 4, W, new Date(t).toISOString().slice(11, every % 60000 ? 19 : 16));
    }
    axes.append(svgEl("text", { class: "unit", x: L - 7, y: B + 16, "text-anchor": "end" }, "UTC"),
      svgEl("line", { class: "axis", x1: L, x2: W - R, y1: B, y2: B }),
      svgEl("line", { class: "axis", x1: L, x2: L, y1: T, y2: B }));
    for (const m of modes) {
      const xs = rate.per_second[m] || [];
      const pts = xs.map((v, i) => x(t1 - (xs.length - 1 - i) * 1000).toFixed(1) + "," + y(v).toFixed(1));
      $("line-" + m).setAttribute("points", pts.join(" "));
      text("rate-" + m, m in rate.per_second ? group(xs.length ? xs[xs.length - 1] : 0) : "not shown in opaque mode");
      $("rate-" + m + "-unit").hidden = !(m in rate.per_second);
    }
    text("rate-peak", group(peak));
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
    text("lease-renewals", group(l.renewals));
    text("hwm", when(l.hwm_ms));
    text("headroom", duration(l.headroom_ms));
    // The time line: from one TTL (or 10 s) before now to past the later
    // of expiry and HWM, one lane each for the lease and the HWM, ticks
    // in seconds from now.
    const svg = $("timeline");
    const [W, H] = size(svg, 600, 64);
    const L = 44, R = 8, B = H - 22;
    const span = Math.max(l.ttl_granted_ms || 10000, 1000);
    const from = now - span;
    const expiry = l.last_renewal_ms && l.ttl_granted_ms ? l.last_renewal_ms + l.ttl_granted_ms : now;
    const to = Math.max(expiry, l.hwm_ms, now) + span / 4;
    const x = (t) => Math.min(W - R, Math.max(L, L + ((t - from) / (to - from)) * (W - L - R)));
    const axes = $("tl-axes");
    axes.replaceChildren();
    const every = timeStep(to - from, Math.max(1, Math.floor((W - L - R) / 60)));
    for (let k = Math.ceil((from - now) / every); now + k * every <= to; k++) {
      xTick(axes, x(now + k * every), 2, B, 0, W, k === 0 ? "now" : (k < 0 ? "−" : "+") + offset(Math.abs(k) * every));
    }
    axes.append(svgEl("text", { class: "lane", x: 0, y: 16 }, "lease"), svgEl("text", { class: "lane", x: 0, y: 34 }, "HWM"),
      svgEl("line", { class: "axis", x1: L, x2: W - R, y1: B, y2: B }));
    const lease = $("tl-lease");
    const start = l.last_renewal_ms || now;
    lease.setAttribute("x", x(start).toFixed(1));
    lease.setAttribute("width", l.held ? Math.max(0, x(expiry) - x(start)).toFixed(1) : "0");
    const hwm = $("tl-hwm");
    hwm.setAttribute("x", x(now).toFixed(1));
    hwm.setAttribute("width", Math.max(0, x(l.hwm_ms) - x(now)).toFixed(1));
    const nx = x(now).toFixed(1);
    const nowLine = $("tl-now");
    nowLine.setAttribute("x1", nx);
    nowLine.setAttribute("x2", nx);
    nowLine.setAttribute("y2", String(B));
  }

  const COLUMNS = ["tag", "IDs in memory", "configured step", "current step", "current range", "next range", "last fetch", "latency", "store", "errors"];

  function renderTags(tags, now) {
    const rows = tags.slice().sort((a, b) => (sortDesc ? b.in_memory - a.in_memory : a.in_memory - b.in_memory) || (a.tag < b.tag ? -1 : 1));
    const body = $("tags").tBodies[0];
    body.replaceChildren();
    for (const t of rows) {
      const tr = document.createElement("tr");
      const range = (r) => (t.opaque ? "opaque" : r.end > r.start ? "[" + group(r.start) + " … " + group(r.end) + ")" : "–");
      const cells = [
        t.tag, group(t.in_memory), group(t.configured_step), group(t.step), range(t.current), range(t.next),
        t.last_fetch_ms ? duration(now - t.last_fetch_ms) + " ago" : "–",
        t.fetch_latency_ms.toFixed(1) + " ms",
        t.healthy ? "ok" : "failing",
        group(t.errors) + (t.last_error ? ": " + t.last_error : ""),
      ];
      cells.forEach((v, i) => {
        const td = document.createElement("td");
        td.dataset.label = COLUMNS[i];
        if (i === 0 || i === 9) {
          const div = document.createElement("div");
          div.className = i === 0 ? "name" : "";
          pieces(div, String(v));
          td.append(div);
        } else {
          td.textContent = String(v);
        }
        if (i === 0) td.className = "tag";
        if (i === 1) td.title = group(t.left) + " left in the current range + " + group(t.prefetched) + " prefetched";
        if (i === 4 || i === 5) td.className = "range";
        if (i === 6 && t.last_fetch_ms) td.title = when(t.last_fetch_ms);
        if (i === 8) td.className = t.healthy ? "" : "bad";
        tr.append(td);
      });
      tr.dataset.tag = t.tag;
      body.append(tr);
    }
    $("no-tags").hidden = tags.length > 0;
    $("sort-left").textContent = "IDs in memory " + (sortDesc ? "▼" : "▲");
  }

  function renderErrors(errs) {
    const ul = $("errors");
    ul.replaceChildren();
    for (const e of errs) {
      const li = document.createElement("li");
      pieces(li, when(Date.parse(e.time)) + " " + e.source + ": " + e.message + (e.count > 1 ? " (×" + e.count + ")" : ""));
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
      if (last) renderTags(last.tags, last.now_ms);
    });
    // The charts are drawn to their size on screen: redraw when it changes.
    window.addEventListener("resize", () => {
      if (!last) return;
      renderRate(last.rate);
      renderLease(last.lease, last.now_ms);
    });
    refresh();
    setInterval(refresh, REFRESH);
  });
})();
