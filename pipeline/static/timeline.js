// A run's timeline on one axis of seconds since the run's start, drawn as SVG from
// window.RUN_TIMELINE (the run's timeline.js, written by pipeline/timeline.py): fault
// bands, controller tenures, per-partition leader and ISR lanes (foldable), produce and
// poll rates, latency quantiles, failover and election markers, and a lane of the
// verdict's witnesses, each a diamond at the time its proof was complete (a bar back to
// when it began) that links to its row on the page; a row's "on the timeline" link zooms
// to it and highlights it. Wheel zooms, drag pans, double-click resets; hovering shows
// exact times and values. No dependency.
(function () {
  "use strict";
  var NS = "http://www.w3.org/2000/svg";
  var LEFT = 130, RIGHT = 12, AXIS = 22, ROW = 16, CHART = 90, GAP = 8;
  var PALETTE = ["#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"];
  var SERIES = {
    ok: "#2ca02c", fail: "#d62728", info: "#ff7f0e",
    p50_ms: "#1f77b4", p95_ms: "#9467bd", p99_ms: "#d62728", max_ms: "#7f7f7f"
  };
  var WITNESS = { violation: "#c2185b", anomaly: "#ff7f0e", allowed: "#999" }, WITNESS_ROWS = 4;

  function el(name, attrs, parent, text) {
    var node = document.createElementNS(NS, name);
    Object.keys(attrs).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) node.textContent = text;
    if (parent) parent.appendChild(node);
    return node;
  }

  function fmt(t) { return t.toFixed(3) + " s"; }

  function witnessTip(w) {
    var what = w.kind === "anomaly" ? " (Jepsen anomaly class)" : w.kind === "allowed" ? " (allowed)" : "";
    return "witness of " + w.invariant + what + "\n" + w.text + "\nproof complete at " + fmt(w.t) +
      (w.from !== null && w.from < w.t ? ", begun at " + fmt(w.from) : "") + "\nclick: its row below";
  }

  function colour(id) {
    if (id === null || id === undefined || id < 0) return "#ccc";
    return PALETTE[Math.abs(id) % PALETTE.length];
  }

  function draw(box, data, state) {
    var width = Math.max(box.clientWidth || 800, 400);
    var span = state.x1 - state.x0 || 1;
    function x(t) { return LEFT + (t - state.x0) / span * (width - LEFT - RIGHT); }
    function clampX(t) { return Math.min(Math.max(x(t), LEFT), width - RIGHT); }
    var svg = el("svg", { "class": "timeline-svg", "data-from": state.x0, "data-to": state.x1 });
    var grid = el("g", { "class": "axis" }, svg);
    var body = el("g", {}, svg);
    var y = AXIS;

    // rows of bars (faults, controllers, partition lanes)
    function label(text, yy, cls) {
      return el("text", { x: 4, y: yy + ROW - 4, "class": cls || "label" }, svg, text);
    }
    function bar(from, to, yy, fill, tip, cls, text) {
      var a = clampX(from), b = clampX(to);
      if (b < LEFT || a > width - RIGHT) return;
      var r = el("rect", { x: a, y: yy + 1, width: Math.max(b - a, 1), height: ROW - 2, fill: fill,
        "class": cls, "data-tip": tip }, body);
      if (text && b - a > text.length * 6) {
        el("text", { x: a + 2, y: yy + ROW - 4, fill: "#fff", "pointer-events": "none" }, body, text);
      }
      return r;
    }

    // witnesses close in time stack in up to WITNESS_ROWS rows, so that each can be hovered
    var marks = data.witnesses || [], witnessRow = null, witnessRows = Math.min(marks.length, WITNESS_ROWS);
    if (marks.length) {
      label("witnesses (" + marks.length + ")", y, "label head");
      witnessRow = y;
      y += ROW * witnessRows + GAP;
    }

    label("faults", y, "label head");
    if (!data.faults.length) label("(none)", y + ROW, "label muted");
    data.faults.forEach(function (f, i) {
      var yy = y + ROW * (i + 1);
      label(f.kind + " " + f.node, yy);
      bar(f.from, f.to, yy, "#d62728", "fault " + f.fault + ": " + f.kind + " on " + f.node +
        "\nin effect " + fmt(f.from) + " to " + fmt(f.to) +
        (f.started !== null && f.started !== undefined ? "\nstarted " + fmt(f.started) : "") +
        (f.stopped !== null && f.stopped !== undefined ? ", stopped " + fmt(f.stopped) : ""),
        "fault-bar", f.kind);
    });
    y += ROW * (Math.max(data.faults.length, 1) + 1) + GAP;

    label("controller", y, "label head");
    data.controllers.forEach(function (c) {
      var id = parseInt(String(c.node).replace(/\D/g, ""), 10);
      bar(c.from, c.to, y, colour(id), "controller " + c.node + ", epoch " + c.epoch +
        "\n" + fmt(c.from) + " to " + fmt(c.to), "controller", c.node + " e" + c.epoch);
    });
    y += ROW + GAP;

    var total = data.partitions_total || data.partitions.length;
    var fold = label((state.folded ? "\u25b8 " : "\u25be ") + "partitions (" +
      (total > data.partitions.length ? data.partitions.length + " of " + total : total) + ")",
      y, "label head fold");
    fold.addEventListener("click", function () { state.folded = !state.folded; state.redraw(); });
    y += ROW;
    if (!state.folded) {
      data.partitions.forEach(function (p) {
        label(p.name, y, "label lane-label");
        p.changes.forEach(function (c, i) {
          var to = i + 1 < p.changes.length ? p.changes[i + 1][0] : data.end;
          var isr = c[2] ? "[" + c[2].join(",") + "]" : "?";
          var led = c[1] === null || c[1] === undefined || c[1] < 0 ? "none" : c[1];
          bar(c[0], to, y, colour(c[1]), p.name + ": leader " + led + ", ISR " + isr +
            ", leader epoch " + c[3] + "\nfrom " + fmt(c[0]) + " to " + fmt(to) + " (" + c[4] + ")",
            "lane", (led === "none" ? "no leader" : "L" + led) + " " + isr);
        });
        y += ROW;
      });
    }
    y += GAP;

    // charts over windows
    function chart(title, series, keys, unit) {
      label(title, y, "label head");
      var top = y + 4, h = CHART - 8, max = 0;
      keys.forEach(function (k) {
        (series[k] || []).forEach(function (v) { if (v !== null && v > max) max = v; });
      });
      max = max || 1;
      el("line", { x1: LEFT, x2: width - RIGHT, y1: top + h, y2: top + h, stroke: "#999" }, svg);
      el("text", { x: LEFT - 4, y: top + 8, "text-anchor": "end" }, svg, max.toFixed(0) + " " + unit);
      el("text", { x: LEFT - 4, y: top + h, "text-anchor": "end" }, svg, "0");
      keys.forEach(function (k, ki) {
        var points = [];
        (series[k] || []).forEach(function (v, i) {
          var t = series.t[i];
          if (v === null || t < state.x0 - data.window_s || t > state.x1) return;
          points.push(x(t + data.window_s / 2).toFixed(1) + "," + (top + h - v / max * h).toFixed(1));
        });
        if (points.length) {
          el("polyline", { points: points.join(" "), fill: "none", stroke: SERIES[k], "stroke-width": 1.5,
            "class": "series series-" + k }, body);
        }
        el("text", { x: 4, y: top + 24 + ki * 12, fill: SERIES[k] }, svg, k.replace("_ms", ""));
      });
      var region = { top: top, bottom: top + h, series: series, keys: keys, unit: unit };
      state.charts.push(region);
      y += CHART + GAP;
    }
    state.charts = [];
    chart("ops / window", data.rates, ["ok", "fail", "info"], "ops");
    chart("latency", data.latency, ["p50_ms", "p95_ms", "p99_ms"], "ms");
    var height = y;

    // fault bands and markers over everything
    data.faults.forEach(function (f) {
      var a = clampX(f.from), b = clampX(f.to);
      if (b > a) {
        el("rect", { x: a, y: AXIS, width: b - a, height: height - AXIS, fill: "#d62728",
          "fill-opacity": 0.08, "class": "band", "pointer-events": "none" }, svg);
      }
    });
    data.markers.forEach(function (m) {
      if (m.t < state.x0 || m.t > state.x1) return;
      var xx = x(m.t);
      el("line", { x1: xx, x2: xx, y1: AXIS, y2: height, stroke: m.kind === "failover" ? "#9467bd" : "#888",
        "stroke-dasharray": "3,3", "class": "marker marker-" + m.kind, "pointer-events": "none" }, svg);
      el("path", { d: "M" + (xx - 4) + "," + (AXIS - 8) + " l8,0 l-4,7 z",
        fill: m.kind === "failover" ? "#9467bd" : "#888", "class": "marker-head",
        "data-tip": m.kind + " at " + fmt(m.t) + "\n" + m.text }, svg);
    });

    // witnesses over everything, each a link to its row
    var ends = [];
    marks.forEach(function (w) {
      if (w.t < state.x0 || w.t > state.x1) return;
      var active = state.focus === w.id, fill = WITNESS[w.kind] || WITNESS.violation;
      var xx = x(w.t), a = w.from !== null && w.from < w.t ? clampX(w.from) : xx, row = 0;
      for (var i = 0; i < witnessRows; i++) {
        if (ends[i] === undefined || ends[i] < a - 12) { row = i; break; }
        if (ends[i] < ends[row]) row = i;
      }
      ends[row] = Math.max(ends[row] === undefined ? xx : ends[row], xx);
      var cy = witnessRow + ROW * row + ROW / 2, r = active ? 7 : 5;
      if (a < xx) {
        el("rect", { x: a, y: cy - 2, width: Math.max(xx - a, 1), height: 4, fill: fill, "fill-opacity": 0.4,
          "class": "witness-span", "pointer-events": "none" }, svg);
      }
      el("line", { x1: xx, x2: xx, y1: AXIS, y2: height, stroke: fill, "stroke-width": active ? 2 : 1,
        "stroke-dasharray": active ? "none" : "1,3", "class": "witness-line" + (active ? " active" : ""),
        "pointer-events": "none" }, svg);
      var link = el("a", { href: "#" + w.id, "class": "witness-link" }, svg);
      el("path", { d: "M" + xx + "," + (cy - r) + " l" + r + "," + r + " l" + (-r) + "," + r + " l" + (-r) + "," + (-r) + " z",
        fill: fill, stroke: active ? "#000" : "#fff", "stroke-width": active ? 1.5 : 0.5,
        "class": "witness-mark witness-" + w.kind + (active ? " active" : ""), "data-witness": w.id,
        "data-tip": witnessTip(w) }, link);
    });

    // axis
    var ticks = 8, step = Math.pow(10, Math.floor(Math.log10(span / ticks)));
    [1, 2, 5, 10].some(function (m) { if (span / (step * m) <= ticks) { step *= m; return true; } return false; });
    for (var t = Math.ceil(state.x0 / step) * step; t <= state.x1; t += step) {
      var xx = x(t);
      el("line", { x1: xx, x2: xx, y1: AXIS - 4, y2: height, stroke: "#eee", "class": "tick" }, grid);
      el("text", { x: xx, y: 10, "text-anchor": "middle", "class": "tick-label" }, grid,
        (step < 1 ? t.toFixed(Math.max(0, -Math.floor(Math.log10(step)))) : t.toFixed(0)) + " s");
    }
    svg.setAttribute("height", height);
    svg.setAttribute("viewBox", "0 0 " + width + " " + height);
    var cursor = el("line", { x1: 0, x2: 0, y1: AXIS, y2: height, stroke: "#000", "stroke-width": 0.5,
      visibility: "hidden", "pointer-events": "none" }, svg);
    state.x = x;
    state.width = width;
    state.cursor = cursor;
    return svg;
  }

  function nearest(series, t, half) {
    var best = -1;
    for (var i = 0; i < series.t.length; i++) {
      if (series.t[i] <= t && t < series.t[i] + 2 * half) best = i;
    }
    return best;
  }

  function start(box, data) {
    var tip = document.createElement("div");
    tip.className = "tip";
    var state = { x0: data.start, x1: Math.max(data.end, data.start + 1), folded: data.partitions.length > 12,
      focus: null };
    var home = [state.x0, state.x1];
    var svg = null;
    state.redraw = function () {
      var next = draw(box, data, state);
      if (svg) box.replaceChild(next, svg); else box.appendChild(next);
      svg = next;
    };
    box.appendChild(tip);
    state.redraw();
    function at(evt) {
      var r = svg.getBoundingClientRect();
      var px = (evt.clientX - r.left) * state.width / r.width;
      return { px: px, py: evt.clientY - r.top, t: state.x0 + (px - LEFT) / (state.width - LEFT - RIGHT) * (state.x1 - state.x0) };
    }
    box.addEventListener("wheel", function (evt) {
      var p = at(evt);
      if (p.px < LEFT) return;
      evt.preventDefault();
      var k = evt.deltaY > 0 ? 1.25 : 0.8;
      var x0 = p.t - (p.t - state.x0) * k, x1 = p.t + (state.x1 - p.t) * k;
      if (x1 - x0 < 0.01) return;
      state.x0 = Math.max(x0, home[0]); state.x1 = Math.min(x1, home[1]);
      state.redraw();
    }, { passive: false });
    var drag = null;
    box.addEventListener("mousedown", function (evt) { drag = { t: at(evt).t, x0: state.x0, x1: state.x1 }; });
    window.addEventListener("mouseup", function () { drag = null; });
    box.addEventListener("dblclick", function () { state.x0 = home[0]; state.x1 = home[1]; state.redraw(); });
    box.addEventListener("mousemove", function (evt) {
      var p = at(evt);
      if (drag) {
        var shift = drag.t - (drag.x0 + (p.px - LEFT) / (state.width - LEFT - RIGHT) * (drag.x1 - drag.x0));
        var w = drag.x1 - drag.x0;
        state.x0 = Math.min(Math.max(drag.x0 + shift, home[0]), home[1] - w);
        state.x1 = state.x0 + w;
        state.redraw();
        return;
      }
      if (p.px < LEFT || p.px > state.width - RIGHT) { tip.style.display = "none"; return; }
      var lines = ["t = " + fmt(p.t)];
      var target = evt.target && evt.target.getAttribute && evt.target.getAttribute("data-tip");
      if (target) lines.push(target);
      var r = svg.getBoundingClientRect(), scale = r.height / parseFloat(svg.getAttribute("height"));
      state.charts.forEach(function (c) {
        if (p.py / scale < c.top || p.py / scale > c.bottom) return;
        var i = nearest(c.series, p.t, data.window_s / 2);
        if (i < 0) return;
        lines.push("window " + fmt(c.series.t[i]) + " to " + fmt(c.series.t[i] + data.window_s));
        c.keys.forEach(function (k) {
          var v = c.series[k][i];
          lines.push(k.replace("_ms", "") + ": " + (v === null ? "none" : v + " " + c.unit));
        });
      });
      state.cursor.setAttribute("x1", p.px); state.cursor.setAttribute("x2", p.px);
      state.cursor.setAttribute("visibility", "visible");
      tip.textContent = lines.join("\n");
      tip.style.display = "block";
      tip.style.left = Math.min(evt.clientX - box.getBoundingClientRect().left + 12, box.clientWidth - 360) + "px";
      tip.style.top = (evt.clientY - box.getBoundingClientRect().top + 12) + "px";
    });
    box.addEventListener("mouseleave", function () { tip.style.display = "none"; });
    // a witness row's "on the timeline" link: zoom around its proof and highlight it
    function focus(id) {
      var w = (data.witnesses || []).filter(function (m) { return m.id === id; })[0];
      if (!w) return false;
      var from = w.from !== null && w.from < w.t ? w.from : w.t;
      var pad = Math.max((w.t - from) * 0.25, (home[1] - home[0]) * 0.05, 0.5);
      state.x0 = Math.max(from - pad, home[0]);
      state.x1 = Math.min(w.t + pad, home[1]);
      state.focus = id;
      state.redraw();
      return true;
    }
    document.addEventListener("click", function (evt) {
      var link = evt.target && evt.target.closest ? evt.target.closest("a.witness-time") : null;
      if (!link || !focus(link.getAttribute("data-witness"))) return;
      evt.preventDefault();
      box.scrollIntoView({ block: "start" });
    });
    box.setAttribute("data-rendered", "true");
  }

  var box = document.getElementById("timeline");
  if (box && window.RUN_TIMELINE) start(box, window.RUN_TIMELINE);
})();
