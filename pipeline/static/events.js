// A run's event browser over window.RUN_EVENTS (the run's events.js, written by
// pipeline/run_page.py): filter by node, kind, partition and a time window in seconds
// since the run's start. The address's hash sets the filters (#node=broker2&line=14,
// #kind=..., #partition=t-0, #from=..&to=.., #op=<process>#<id>); the event or
// operation it names is marked and scrolled to. No dependency.
(function () {
  "use strict";
  var SHOWN = 2000;
  var data = window.RUN_EVENTS || { events: [], ops: [], total: 0 };
  var form = document.getElementById("filters");
  var body = document.querySelector("#events tbody");
  var opsBody = document.querySelector("#ops tbody");
  var count = document.getElementById("count");
  var wanted = { line: null, op: null };

  function options(select, values) {
    values.forEach(function (v) {
      var o = document.createElement("option");
      o.value = v; o.textContent = v; select.appendChild(o);
    });
  }
  function unique(i) {
    var seen = {};
    data.events.forEach(function (e) { seen[e[i]] = true; });
    return Object.keys(seen).sort();
  }
  options(form.node, unique(1));
  options(form.kind, unique(3));

  function row(cells, hit) {
    var tr = document.createElement("tr");
    if (hit) tr.className = "hit";
    cells.forEach(function (c, i) {
      var td = document.createElement("td");
      if (i > 0) td.className = "text";
      td.textContent = i === 0 ? c.toFixed(3) : String(c);
      tr.appendChild(td);
    });
    return tr;
  }

  function show() {
    var node = form.node.value, kind = form.kind.value, part = form.partition.value.trim();
    var from = parseFloat(form.from.value), to = parseFloat(form.to.value);
    var kept = data.events.filter(function (e) {
      return (!node || e[1] === node) && (!kind || e[3] === kind) && (!part || e[4] === part) &&
        (isNaN(from) || e[0] >= from) && (isNaN(to) || e[0] <= to);
    });
    body.textContent = "";
    var first = null;
    kept.slice(0, SHOWN).forEach(function (e) {
      var hit = wanted.line !== null && e[2] === wanted.line && (!node || e[1] === node);
      var tr = row(e, hit);
      if (hit && !first) first = tr;
      body.appendChild(tr);
    });
    count.textContent = kept.length + " of " + data.events.length + " event(s) shown" +
      (kept.length > SHOWN ? " (the first " + SHOWN + ")" : "") +
      (data.total > data.events.length ? "; the browser holds " + data.events.length + " of the run's " +
        data.total + " events, events.csv " + data.kept + ", the run directory's events/ all" : "");
    opsBody.textContent = "";
    data.ops.forEach(function (o) {
      // "final-read" stands for every operation of the final read shown ("final-read#<id>")
      var tr = row(o, wanted.op !== null && (o[1] === wanted.op || o[1].indexOf(wanted.op + "#") === 0));
      if (tr.className && !first) first = tr;
      opsBody.appendChild(tr);
    });
    if (first && first.scrollIntoView) first.scrollIntoView({ block: "center" });
  }

  function fromHash() {
    var params = new URLSearchParams(window.location.hash.replace(/^#/, ""));
    ["node", "kind", "partition", "from", "to"].forEach(function (k) {
      form[k].value = params.get(k) || "";
    });
    wanted.line = params.has("line") ? parseInt(params.get("line"), 10) : null;
    wanted.op = params.get("op");
    show();
  }

  form.addEventListener("input", show);
  form.addEventListener("change", show);
  document.getElementById("clear").addEventListener("click", function () {
    window.location.hash = "";
    fromHash();
  });
  window.addEventListener("hashchange", fromHash);
  fromHash();
})();
