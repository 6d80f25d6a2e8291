"""The dashboard's style sheet, band palette (ColorBrewer RdYlGn, 5 classes) and its one script.

Public: :data:`CSS`, :data:`SCRIPT`, :func:`hash_of`, :func:`band_class`.
"""

from __future__ import annotations

import base64
import hashlib

PALETTE = {"lean": "#1a9641", "light": "#a6d96a", "moderate": "#fee08b", "heavy": "#fdae61",
           "very heavy": "#d7191c", "not measured": "#ffffff"}


def band_class(label: str) -> str:
    """CSS class of a band label: ``band-very-heavy``."""
    return "band-" + label.replace(" ", "-")


CSS = """
:root{--fg:#1b1f24;--muted:#4d5562;--line:#d8dde3;--head:#f4f6f8;--link:#1f5fa8;--accent:#1f5fa8}
*{box-sizing:border-box}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:#fff;margin:0}
main{max-width:1240px;margin:0 auto;padding:16px 16px 32px}
h1{font-size:24px;margin:0 0 4px}h2{font-size:19px;margin:28px 0 8px}
a{color:var(--link)}.muted{color:var(--muted)}
header.top nav{font-size:14px;margin:0 0 4px}
header.top .lede{margin:0 0 10px;color:var(--muted)}
table{border-collapse:collapse;width:100%}
section>table:not(#leaderboard){display:block;max-width:100%;overflow-x:auto}
th,td{padding:6px 8px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{background:var(--head);font-weight:600;white-space:nowrap}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
#leaderboard{table-layout:auto}
#leaderboard td.c-name{overflow-wrap:break-word;min-width:9em}
#leaderboard td.c-name .cat,#leaderboard td.c-name .since{display:block;font-size:12px;color:var(--muted)}
#leaderboard td.c-largest{font-size:13px;overflow-wrap:break-word;min-width:10em}
#leaderboard td.c-why{font-size:13px;min-width:14em;overflow-wrap:break-word}
#leaderboard td.c-tokens b{font-size:15px}
.meter{display:block;height:5px;background:#eef1f4;border-radius:3px;margin-top:3px;min-width:60px}
.meter span{display:block;height:5px;border-radius:3px;background:var(--fg);box-shadow:inset 0 0 0 1px rgba(0,0,0,.35)}
details summary{cursor:pointer;color:var(--link);font-size:13px}
details p{margin:4px 0 0;white-space:pre-wrap;overflow-wrap:anywhere}
.sw{display:inline-block;width:11px;height:11px;border:1px solid var(--fg);border-radius:2px;margin-right:5px;vertical-align:-1px}
""" + "".join(f".{band_class(label)} .sw,.meter.{band_class(label)} span{{background:{colour}}}\n"
              for label, colour in PALETTE.items()) + """
.chip{display:inline-block;white-space:nowrap;border:1px solid var(--line);border-radius:999px;padding:1px 9px;font-size:13px;line-height:20px}
.chip.s-measured{background:#e7f4ea;border-color:#9ccfa8;color:#14532d}
.chip.s-dynamic{background:#e8f0fb;border-color:#9bb9e3;color:#173f73}
.chip.g-failed{background:#fdeceb;border-color:#eba6a2;color:#7a1a14}
.chip.g-machine{background:#f1f2f4;border-color:#c3c8cf;color:#3b424c}
form#controls{display:flex;flex-wrap:wrap;gap:8px 14px;align-items:end;margin:6px 0 8px;padding:10px 12px;background:var(--head);border-radius:8px}
form#controls label{display:flex;flex-direction:column;font-size:13px;color:var(--muted);min-width:0}
form#controls label.q{flex:1 1 12em;max-width:22em}
form#controls input,form#controls select{font:inherit;padding:5px 8px;max-width:100%;border:1px solid #b9c0c8;border-radius:6px;background:#fff;color:var(--fg)}
form#controls input{width:100%}
.groups,.bands{display:flex;flex-wrap:wrap;gap:6px}
.groups button,.bands button{font:inherit;font-size:14px;border:1px solid #b9c0c8;background:#fff;color:var(--fg);border-radius:999px;padding:4px 11px;cursor:pointer}
.bands button{font-size:13px;padding:3px 9px}
.groups button[aria-pressed=true]{background:var(--accent);border-color:var(--accent);color:#fff}
.bands button[aria-pressed=true]{border-color:var(--fg);box-shadow:inset 0 0 0 1px var(--fg);font-weight:600}
.groups button b,.bands button b{font-variant-numeric:tabular-nums;font-weight:600}
#summary{margin:4px 0 6px;font-size:14px}
#more{font:inherit;padding:6px 14px;border:1px solid #b9c0c8;border-radius:6px;background:#fff;cursor:pointer}
#more[hidden],.bands[hidden]{display:none}
th button{font:inherit;font-weight:600;background:none;border:0;padding:0;color:inherit;cursor:pointer;text-align:inherit}
th[aria-sort=ascending] button::after{content:" ▲"}th[aria-sort=descending] button::after{content:" ▼"}
svg.spark{vertical-align:middle}
@media (max-width:720px){
 main{padding:12px 10px 24px}
 h1{font-size:20px}
 form#controls{padding:8px}
 form#controls label.q{flex-basis:100%}
 #leaderboard thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
 #leaderboard,#leaderboard tbody,#leaderboard td{display:block;width:100%;max-width:none}
 #leaderboard tr{display:grid;grid-template-columns:repeat(3,minmax(0,1fr));gap:0 10px;
  border:1px solid var(--line);border-radius:8px;margin:0 0 8px;padding:6px 10px}
 #leaderboard td{border:0;padding:2px 0;text-align:left;white-space:normal;min-width:0}
 #leaderboard td.c-name,#leaderboard td.c-largest,#leaderboard td.c-why,#leaderboard td.c-trend,#leaderboard td.c-session{grid-column:1/-1}
 #leaderboard td.c-name{font-size:16px;font-weight:600;order:-1}
 #leaderboard td.c-rank{display:none}
 #leaderboard td[data-label]:not(.c-name):not(.c-tokens):not(.c-band):not(.c-status)::before{content:attr(data-label) " ";font-weight:600;color:var(--muted);font-size:12px}
 #leaderboard td.none{display:none}
}
""".strip()

SCRIPT = """
(function () {
  "use strict";
  var source = document.getElementById("rows");
  var table = document.getElementById("leaderboard");
  if (!source || !table) { return; }
  var doc = JSON.parse(source.textContent);
  var rows = doc.rows;
  var PAGE = 200;
  var head = table.tHead, body = table.tBodies[0];
  var text = document.getElementById("filter-text");
  var groupBox = document.getElementById("filter-group");
  var bandBox = document.getElementById("filter-band");
  var sortKey = document.getElementById("sort-key");
  var summary = document.getElementById("summary");
  var more = document.getElementById("more");
  var machineNote = document.getElementById("machine-note");
  var BREAK = /(?<=[_\\-./:])(?=.)|(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])/;
  var top = 0;
  rows.forEach(function (r, i) {
    r.i = i;
    r.hay = (r.name + " " + (r.category || "") + " " + (r.find || "")).toLowerCase();
    if (r.tokens > top) { top = r.tokens; }
  });

  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) { return "&#" + c.charCodeAt(0) + ";"; });
  }
  function wbr(s) { return String(s).split(BREAK).map(esc).join("<wbr>"); }
  function num(v) { return Number(v).toLocaleString("en-US"); }
  function bandClass(b) { return "band-" + b.replace(/ /g, "-"); }
  function spark(points) {
    var w = 84, h = 22, lo = Math.min.apply(null, points), hi = Math.max.apply(null, points);
    var span = hi - lo || 1;
    var xy = points.map(function (p, i) {
      return (2 + i * (w - 4) / (points.length - 1)).toFixed(1) + "," + (h - 3 - (p - lo) * (h - 6) / span).toFixed(1);
    });
    var change = points[0] ? (points[points.length - 1] - points[0]) * 100 / points[0] : 0;
    return '<svg class="spark" width="' + w + '" height="' + h + '" viewBox="0 0 ' + w + " " + h +
      '" role="img" aria-label="' + points.length + ' comparable sweeps"><polyline fill="none" stroke="#1f5fa8" ' +
      'stroke-width="1.5" points="' + xy.join(" ") + '"/></svg> ' + (change > 0 ? "+" : "") + change.toFixed(1) + "%";
  }

  var COLUMNS = {
    ranked: [
      { key: "rank", title: "#", num: true, sort: function (r) { return r.rank; },
        cell: function (r) { return r.rank; } },
      { key: "name", title: "Server", sort: function (r) { return r.name.toLowerCase(); },
        cell: function (r) { return nameCell(r); } },
      { key: "tokens", title: "Tokens", num: true, sort: function (r) { return r.tokens; },
        cell: function (r) {
          return "<b>" + num(r.tokens) + '</b><span class="meter ' + bandClass(r.band) + '"><span style="width:' +
            Math.max(1, r.tokens * 100 / top).toFixed(1) + '%"></span></span>';
        } },
      { key: "share", title: "of 200k", num: true, sort: function (r) { return r.tokens; },
        cell: function (r) { var v = r.tokens * 100 / doc.context; return v > 0 && v < 0.05 ? "<0.1%" : v.toFixed(1) + "%"; } },
      { key: "band", title: "Band", sort: function (r) { return doc.bands.indexOf(r.band); },
        cell: function (r) { return '<span class="chip ' + bandClass(r.band) + '"><span class="sw"></span>' + esc(r.band) + "</span>"; } },
      { key: "tools", title: "Tools", num: true, sort: function (r) { return r.tools; },
        cell: function (r) { return num(r.tools); } },
      { key: "largest", title: "Largest tool", sort: function (r) { return r.largest ? r.largest[1] : null; },
        cell: function (r) { return r.largest ? wbr(r.largest[0]) + " (" + num(r.largest[1]) + ")" : ""; } }
    ],
    other: [
      { key: "name", title: "Server", sort: function (r) { return r.name.toLowerCase(); },
        cell: function (r) { return nameCell(r); } },
      { key: "status", title: "Status", sort: function (r) { return r.status; },
        cell: function (r) { return chip(r); } },
      { key: "why", title: "Why", sort: function (r) { return (r.why || "").toLowerCase(); },
        cell: function (r) {
          var out = r.why ? '<span class="reason">' + esc(r.why) + "</span>" : "";
          if (r.note) { out += "<details><summary>full note</summary><p>" + esc(r.note) + "</p></details>"; }
          return out;
        } },
      { key: "date", title: "Tried", sort: function (r) { return r.date || ""; },
        cell: function (r) { return esc(r.date || "not yet"); } }
    ]
  };
  if (doc.columns.session) {
    COLUMNS.ranked.push({ key: "session", title: "Session start", num: true,
      sort: function (r) { return r.session ? r.session[0] : null; },
      cell: function (r) { return r.session ? (r.session[1] ? "≥ " : "") + num(r.session[0]) : ""; } });
  }
  if (doc.columns.trend) {
    COLUMNS.ranked.push({ key: "trend", title: "Trend", num: true,
      sort: function (r) { return r.trend ? (r.trend[r.trend.length - 1] - r.trend[0]) / (r.trend[0] || 1) : null; },
      cell: function (r) { return r.trend ? spark(r.trend) : ""; } });
  }

  function nameCell(r) {
    var out = '<a href="' + esc(r.href) + '">' + wbr(r.name) + "</a>";
    if (r.group === "ranked" && r.status !== "measured") { out += " " + chip(r); }
    if (r.category) { out += '<span class="cat">' + esc(r.category) + "</span>"; }
    if (r.since) { out += '<small class="since">not measured here since ' + esc(r.since) + "</small>"; }
    return out;
  }
  function chip(r) {
    return '<span class="chip s-' + esc(r.status) + " g-" + esc(r.group) + '">' + esc(r.status) + "</span>";
  }

  var state = { group: "ranked", band: "", query: "", col: "rank", dir: 1, shown: PAGE };
  function columns() { return state.group === "ranked" ? COLUMNS.ranked : COLUMNS.other; }

  function matches(r) {
    return !state.query || r.hay.indexOf(state.query) >= 0;
  }

  function drawHead() {
    var cols = columns();
    head.innerHTML = "<tr>" + cols.map(function (c) {
      var sorted = c.key === state.col ? ' aria-sort="' + (state.dir > 0 ? "ascending" : "descending") + '"' : "";
      return '<th scope="col" data-key="' + c.key + '"' + (c.num ? ' class="n"' : "") + sorted +
        '><button type="button">' + esc(c.title) + "</button></th>";
    }).join("") + "</tr>";
    sortKey.innerHTML = cols.map(function (c) {
      return ["asc", "desc"].map(function (way) {
        var value = c.key + ":" + way;
        return '<option value="' + value + '"' + (c.key === state.col && (way === "asc") === (state.dir > 0) ? " selected" : "") +
          ">" + esc(c.title) + (way === "asc" ? " (ascending)" : " (descending)") + "</option>";
      }).join("");
    }).join("");
  }

  function compare(col) {
    return function (a, b) {
      var x = col.sort(a), y = col.sort(b);
      if (x === null || x === undefined || y === null || y === undefined) {
        return (x === null || x === undefined) - (y === null || y === undefined) || a.i - b.i;
      }
      return (x < y ? -state.dir : (x > y ? state.dir : 0)) || a.i - b.i;
    };
  }

  function draw() {
    var counts = { ranked: 0, failed: 0, machine: 0 }, bandCounts = {};
    var picked = [];
    rows.forEach(function (r) {
      if (!matches(r)) { return; }
      counts[r.group] += 1;
      if (r.group === "ranked") { bandCounts[r.band] = (bandCounts[r.band] || 0) + 1; }
      if (r.group === state.group && (!state.band || state.group !== "ranked" || r.band === state.band)) { picked.push(r); }
    });
    groupBox.innerHTML = Object.keys(doc.groups).map(function (g) {
      return '<button type="button" data-group="' + g + '" aria-pressed="' + (g === state.group) + '">' +
        esc(doc.groups[g]) + " <b>" + counts[g] + "</b></button>";
    }).join("");
    bandBox.hidden = state.group !== "ranked";
    if (machineNote) { machineNote.hidden = state.group !== "machine"; }
    bandBox.innerHTML = doc.bands.map(function (b) {
      return '<button type="button" class="' + bandClass(b) + '" data-band="' + esc(b) + '" aria-pressed="' + (b === state.band) +
        '"><span class="sw"></span>' + esc(b) + " <b>" + (bandCounts[b] || 0) + "</b></button>";
    }).join("");
    var cols = columns();
    var col = cols.filter(function (c) { return c.key === state.col; })[0] || cols[0];
    picked.sort(compare(col));
    var shown = picked.slice(0, state.shown);
    body.innerHTML = shown.map(function (r) {
      return '<tr data-name="' + esc(r.name.toLowerCase()) + '" data-status="' + esc(r.status) + '">' + cols.map(function (c) {
        var content = String(c.cell(r));
        return '<td class="c-' + c.key + (c.num ? " n" : "") + (content === "" ? " none" : "") + '" data-label="' +
          esc(c.title) + '">' + content + "</td>";
      }).join("") + "</tr>";
    }).join("");
    var label = doc.groups[state.group].toLowerCase();
    summary.textContent = picked.length === 0 ? "No " + label + " server matches." :
      "Showing " + shown.length + " of " + picked.length + " (" + label + (state.band ? ", " + state.band : "") +
      (state.query ? ', matching "' + state.query + '"' : "") + ").";
    more.hidden = shown.length >= picked.length;
    more.textContent = "Show " + Math.min(PAGE, picked.length - shown.length) + " more";
  }

  function sortBy(key, dir) {
    state.col = key; state.dir = dir; state.shown = PAGE;
    drawHead(); draw();
  }

  head.addEventListener("click", function (event) {
    var th = event.target.closest("th");
    if (!th) { return; }
    var key = th.getAttribute("data-key");
    var col = columns().filter(function (c) { return c.key === key; })[0];
    var first = col.num && key !== "rank" ? -1 : 1;
    sortBy(key, state.col === key ? -state.dir : first);
  });
  sortKey.addEventListener("change", function () {
    var parts = sortKey.value.split(":");
    sortBy(parts[0], parts[1] === "asc" ? 1 : -1);
  });
  groupBox.addEventListener("click", function (event) {
    var button = event.target.closest("button");
    if (!button) { return; }
    state.group = button.getAttribute("data-group");
    state.col = state.group === "ranked" ? "rank" : "name"; state.dir = 1; state.shown = PAGE;
    drawHead(); draw();
  });
  bandBox.addEventListener("click", function (event) {
    var button = event.target.closest("button");
    if (!button) { return; }
    var band = button.getAttribute("data-band");
    state.band = state.band === band ? "" : band; state.shown = PAGE;
    draw();
  });
  text.addEventListener("input", function () {
    state.query = text.value.trim().toLowerCase(); state.shown = PAGE;
    draw();
  });
  more.addEventListener("click", function () { state.shown += PAGE; draw(); });
  document.getElementById("controls").addEventListener("submit", function (event) { event.preventDefault(); });
  drawHead();
  draw();
}());
""".strip()


def script_hash() -> str:
    """The CSP source that allows exactly ``SCRIPT``: ``'sha256-<base64>'``."""
    return hash_of(SCRIPT)


def hash_of(script: str) -> str:
    """The CSP source that allows exactly the inline ``script``: ``'sha256-<base64>'``."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii") + "'"
