"""The dashboard's style sheet, band palette and one small script (issue #15, "The dashboard").

The script is progressive enhancement: without it the page is the complete table in published
order. With it, a filter form (server or tool name, status) appears, every column header becomes a
sort button, and a "sort by" menu offers the same on narrow screens where the headers are hidden.
It is inlined and allowed by its SHA-256 in the page's Content-Security-Policy, so the page still
loads nothing from anywhere.

Band colours: the badges keep the shields colour names (``harness.core.bands``); on the page each
band gets a swatch from a palette whose neighbours differ in lightness as well as hue (ColorBrewer
RdYlGn, 5 classes), outlined in the text colour so even the palest swatch stands out from the
background, and always next to its label.
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
:root{--fg:#1b1f24;--muted:#4d5562;--line:#d8dde3;--head:#f4f6f8;--link:#1f5fa8}
*{box-sizing:border-box}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:#fff;margin:0}
main{max-width:1240px;margin:0 auto;padding:24px 16px}
h1{font-size:26px;margin:0 0 8px}h2{font-size:19px;margin:28px 0 8px}
a{color:var(--link)}.muted{color:var(--muted)}
p.howto{background:#f4f6f8;border-left:4px solid var(--link);padding:8px 12px}
table{border-collapse:collapse;width:100%}
section>table:not(#leaderboard){display:block;max-width:100%;overflow-x:auto}
th,td{padding:6px 8px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{background:var(--head);font-weight:600}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.name{min-width:9em;overflow-wrap:break-word}
td.note{min-width:15em;max-width:340px;overflow-wrap:break-word;font-size:13px}
td.st{white-space:nowrap}
td.trend{white-space:nowrap;font-size:13px;color:var(--muted)}
details summary{cursor:pointer;color:var(--link)}
details p{margin:4px 0 0;white-space:pre-wrap;overflow-wrap:anywhere}
.sw{display:inline-block;width:12px;height:12px;border:1px solid var(--fg);border-radius:2px;margin-right:6px;vertical-align:-1px}
""" + "".join(f".{band_class(label)} .sw,.{band_class(label)}.bar{{background:{colour}}}\n"
              for label, colour in PALETTE.items()) + """
ul.counts{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:6px 18px}
ul.counts b{font-variant-numeric:tabular-nums}
.dist{display:grid;grid-template-columns:minmax(7em,max-content) minmax(0,1fr) 3em;gap:6px 10px;align-items:center;max-width:760px}
.dist .range{display:block;font-size:12px;color:var(--muted)}
.dist .track{background:#f4f6f8;height:16px;border-radius:3px}
.dist .bar{display:block;height:16px;border:1px solid var(--fg);border-radius:3px;min-width:2px}
.dist .count{text-align:right;font-variant-numeric:tabular-nums}
form#controls[hidden]{display:none}
form#controls{display:flex;flex-wrap:wrap;gap:8px 16px;align-items:end;margin:8px 0 12px}
form#controls label{display:flex;flex-direction:column;font-size:13px;color:var(--muted)}
form#controls input,form#controls select{font:inherit;padding:4px 6px;max-width:100%}
form#controls input{width:18em}
th button{font:inherit;font-weight:600;background:none;border:0;padding:0;color:inherit;cursor:pointer;text-align:inherit}
th[aria-sort=ascending] button::after{content:" ▲"}th[aria-sort=descending] button::after{content:" ▼"}
@media (max-width:720px){
 main{padding:16px 12px}
 #leaderboard thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
 #leaderboard,#leaderboard tbody,#leaderboard td{display:block;width:100%;max-width:none}
 #leaderboard tr{display:grid;grid-template-columns:repeat(2,minmax(0,1fr));grid-auto-flow:dense;gap:0 12px;
  border:1px solid var(--line);border-radius:6px;margin:0 0 10px;padding:6px 10px}
 #leaderboard tr[hidden]{display:none}
 #leaderboard td{border:0;padding:2px 0;text-align:left;white-space:normal;min-width:0}
 #leaderboard td.c-name,#leaderboard td.c-largest,#leaderboard td.c-trend,#leaderboard td.c-note{grid-column:1/-1}
 #leaderboard td.c-name{font-size:17px;order:-1}
 #leaderboard td.c-rank.none~td.c-status{grid-column:1/-1}
 #leaderboard td[data-label]:not(.c-name)::before{content:attr(data-label) ": ";font-weight:600;color:var(--muted)}
 #leaderboard td.none{display:none}
}
""".strip()

SCRIPT = """
(function () {
  "use strict";
  var table = document.getElementById("leaderboard");
  var form = document.getElementById("controls");
  if (!table || !form) { return; }
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
  var text = document.getElementById("filter-text");
  var status = document.getElementById("filter-status");
  var sortKey = document.getElementById("sort-key");
  var shown = document.getElementById("filter-count");
  var current = { col: -1, dir: 1 };

  function value(row, col) {
    var cell = row.cells[col];
    var raw = cell.getAttribute("data-sort");
    return raw === null ? cell.textContent.trim().toLowerCase() : raw;
  }

  function compare(a, b, col, numeric, dir) {
    var x = value(a, col), y = value(b, col);
    if (x === "" || y === "") { return x === y ? 0 : (x === "" ? 1 : -1); }
    if (numeric) { return dir * (parseFloat(x) - parseFloat(y)); }
    return dir * (x < y ? -1 : (x > y ? 1 : 0));
  }

  function sortBy(col, dir) {
    var numeric = heads[col].getAttribute("data-type") === "number";
    var order = rows.map(function (row, index) { return [row, index]; });
    order.sort(function (a, b) { return compare(a[0], b[0], col, numeric, dir) || a[1] - b[1]; });
    order.forEach(function (pair) { body.appendChild(pair[0]); });
    heads.forEach(function (th, index) {
      if (index === col) { th.setAttribute("aria-sort", dir > 0 ? "ascending" : "descending"); }
      else { th.removeAttribute("aria-sort"); }
    });
    current = { col: col, dir: dir };
    sortKey.value = col + ":" + (dir > 0 ? "asc" : "desc");
  }

  function filter() {
    var query = text.value.trim().toLowerCase();
    var wanted = status.value;
    var count = 0;
    rows.forEach(function (row) {
      var match = (!wanted || row.getAttribute("data-status") === wanted) &&
        (!query || row.getAttribute("data-name").indexOf(query) >= 0 ||
         row.getAttribute("data-tools").indexOf(query) >= 0);
      row.hidden = !match;
      if (match) { count += 1; }
    });
    shown.textContent = "showing " + count + " of " + rows.length;
  }

  heads.forEach(function (th, col) {
    var button = document.createElement("button");
    button.type = "button";
    while (th.firstChild) { button.appendChild(th.firstChild); }
    th.appendChild(button);
    button.addEventListener("click", function () {
      var numeric = th.getAttribute("data-type") === "number";
      var first = numeric && col !== 0 ? -1 : 1;
      sortBy(col, current.col === col ? -current.dir : first);
    });
    ["asc", "desc"].forEach(function (way) {
      var option = document.createElement("option");
      option.value = col + ":" + way;
      option.textContent = button.textContent + (way === "asc" ? " (ascending)" : " (descending)");
      sortKey.appendChild(option);
    });
  });
  sortKey.addEventListener("change", function () {
    var parts = sortKey.value.split(":");
    sortBy(parseInt(parts[0], 10), parts[1] === "asc" ? 1 : -1);
  });
  text.addEventListener("input", filter);
  status.addEventListener("change", filter);
  form.addEventListener("submit", function (event) { event.preventDefault(); });
  form.hidden = false;
  filter();
}());
""".strip()


def script_hash() -> str:
    """The CSP source that allows exactly ``SCRIPT``: ``'sha256-<base64>'``."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(SCRIPT.encode("utf-8")).digest()).decode("ascii") + "'"
