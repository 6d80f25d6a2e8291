"""``docs/calculator.html``: what a set of MCP servers costs each client, computed in the browser.

Public: :func:`render`, :data:`RULES_FILE` (the audit's rules it renders from). Rules: docs/PAGES.md,
"Dashboard, calculator, server pages".
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from harness.core.bands import CONTEXT_WINDOW
from harness.pages import dashboard_assets as assets
from harness.pages import site
from harness.pages.board import Row
from harness.pages.text import embedded_json, one_line
from harness.util import published, untrusted

HERE = published.CALCULATOR
CLIENTS = ("claude-code", "claude-desktop", "cursor", "vscode")
# Where each client's file holds its servers (the key each client module's parse() reads).
SERVERS_KEY = {"claude-code": "mcpServers", "claude-desktop": "mcpServers", "cursor": "mcpServers", "vscode": "servers"}
# The Claude Code variable choices offered, as (label, {variable: value}).
CLAUDE_CHOICES: tuple[tuple[str, dict[str, str]], ...] = (("default (nothing set)", {}), ("ENABLE_TOOL_SEARCH=true", {"ENABLE_TOOL_SEARCH": "true"}),
                  ("ENABLE_TOOL_SEARCH=false", {"ENABLE_TOOL_SEARCH": "false"}),
                  ("CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS=1", {"CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS": "1"}))
# The audit's rules for these clients and choices, written by ``python -m harness.audit.calculator_rules``.
RULES_FILE = Path(__file__).resolve().parent / "data" / "calculator-rules.json"


def rules() -> dict[str, Any]:
    """The audit's rule data (``RULES_FILE``) plus the characters ``harness.util.untrusted`` escapes."""
    return {**json.loads(RULES_FILE.read_text(encoding="utf-8")), "unsafeChars": _js_class(untrusted.UNSAFE_CHARS)}


def _js_class(chars: str) -> str:
    """A regular-expression character class body (``a-z``) in JavaScript's ``u``-mode notation,
    ASCII only: every character as ``\\u{hex}``, the ranges' ``-`` kept."""
    return "".join(c if c == "-" else f"\\u{{{ord(c):x}}}" for c in chars)


def render(rows: list[Row]) -> str:
    """The page text for the board ``rows`` (published order)."""
    servers: list[dict[str, Any]] = []
    for r in rows:
        item: dict[str, Any] = {"name": one_line(r.name, 200), "status": r.status, "href": site.link(HERE, published.server_html(r.name))}
        if r.entry.package:
            item["package"] = one_line(r.entry.package, 200)
        if r.entry.url:
            item["url"] = one_line(r.entry.url, 500)
        if r.entry.category:
            item["category"] = one_line(r.entry.category, 80)
        if r.tokens is not None:
            item.update(tokens=r.tokens, tools=r.tool_count)
            if r.session:
                item["session"] = [r.session.tokens, r.session.floor]
        servers.append(item)
    rule_data = rules()
    document = {"servers": servers, "rules": rule_data, "context": CONTEXT_WINDOW}
    e = html.escape
    link = lambda target: e(site.link(HERE, target))  # noqa: E731
    csp = f"default-src 'none'; style-src 'unsafe-inline'; script-src {script_hash()}"
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<meta http-equiv="Content-Security-Policy" content="{e(csp)}">',
        "<title>Setup calculator: what your MCP servers cost each client (mcp-context-cost)</title>",
        f"<style>\n{CSS}\n</style>", "</head>", "<body>", "<main>",
        '<header><h1>What does my MCP setup cost?</h1>',
        f'<nav><a href="{link(published.DASHBOARD)}">dashboard</a> · <a href="{link(published.METHODOLOGY)}">'
        f"{e(site.METHODOLOGY_LABEL)}</a> · <a href=\"{link('docs/AUDIT.md')}\">audit</a></nav>",
        "<p class=\"lede\">Pick servers or paste a client config: each client's cost up front and per request, from "
        "the published measurements and the same rules as <code>mcp-context-cost audit</code>. Nothing you paste "
        "leaves this page — it makes no request at all.</p></header>",
        '<div class="cols">',
        '<section id="input" aria-label="Your servers">',
        '<div class="tabs" role="tablist"><button type="button" role="tab" id="tab-pick" aria-selected="true">'
        'Pick servers</button><button type="button" role="tab" id="tab-paste" aria-selected="false">Paste a config'
        "</button></div>",
        '<div id="pick"><label class="stack"><span>Find</span><input type="search" id="find" autocomplete="off" '
        'placeholder="e.g. github, filesystem"></label><ul id="catalog"></ul></div>',
        '<div id="paste" hidden><label class="stack"><span>Client this file is for</span><select id="client">'
        + "".join(f'<option value="{c}">{e(rule_data["clients"][c]["name"])}</option>' for c in CLIENTS)
        + '</select></label><label class="stack"><span>Config (JSON)</span><textarea id="config" rows="12" '
        'spellcheck="false" placeholder=\'{"mcpServers": {"filesystem": {"command": "npx", "args": ["-y", '
        '"@modelcontextprotocol/server-filesystem", "/tmp"]}}}\'></textarea></label>'
        '<p id="config-problem" class="problem" role="alert"></p></div>',
        "</section>",
        '<section id="result" aria-label="What it costs" aria-live="polite">',
        '<h2>Per client</h2>',
        '<label class="stack inline"><span>Claude Code settings</span><select id="posture"></select></label>',
        '<table id="totals"><thead><tr><th>Client</th><th class="n">Up front</th><th class="n">Every request</th>'
        "</tr></thead><tbody></tbody></table>",
        '<p class="muted" id="explain"></p>',
        '<h2>Servers</h2><table id="servers"><thead><tr><th>Server</th><th class="n">Tokens</th>'
        '<th class="n">Session start</th></tr></thead><tbody></tbody></table>',
        "</section>", "</div>",
        "<noscript><p>The calculator runs in your browser and needs JavaScript; the same figures for your own "
        "configs come from <code>mcp-context-cost audit</code>.</p></noscript>",
        "</main>",
        f'<script type="application/json" id="data">{embedded_json(document)}</script>',
        f"<script>{SCRIPT}</script>", "</body>", "</html>"]) + "\n"


def script_hash() -> str:
    return assets.hash_of(SCRIPT)


CSS = """
:root{--fg:#1b1f24;--muted:#4d5562;--line:#d8dde3;--head:#f4f6f8;--link:#1f5fa8}
*{box-sizing:border-box}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:#fff;margin:0}
main{max-width:1240px;margin:0 auto;padding:16px 16px 32px}
h1{font-size:24px;margin:0 0 4px}h2{font-size:18px;margin:18px 0 6px}
a{color:var(--link)}.muted{color:var(--muted);font-size:14px}
nav{font-size:14px}.lede{color:var(--muted);margin:4px 0 12px}
.cols{display:grid;grid-template-columns:minmax(0,5fr) minmax(0,7fr);gap:20px;align-items:start}
@media (max-width:820px){.cols{grid-template-columns:minmax(0,1fr)}}
#input{background:var(--head);border-radius:8px;padding:10px 12px}
.tabs{display:flex;gap:6px;margin-bottom:8px}
.tabs button{font:inherit;border:1px solid #b9c0c8;background:#fff;border-radius:999px;padding:4px 12px;cursor:pointer}
.tabs button[aria-selected=true]{background:var(--link);border-color:var(--link);color:#fff}
label.stack{display:flex;flex-direction:column;font-size:13px;color:var(--muted);margin:0 0 8px}
label.stack.inline{max-width:26em}
input,select,textarea{font:inherit;color:var(--fg);padding:5px 8px;border:1px solid #b9c0c8;border-radius:6px;background:#fff;max-width:100%}
textarea{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;width:100%}
#catalog{list-style:none;margin:0;padding:0;max-height:420px;overflow-y:auto;background:#fff;border:1px solid var(--line);border-radius:6px}
#catalog li{border-bottom:1px solid var(--line)}
#catalog label{display:grid;grid-template-columns:auto minmax(0,1fr) auto;gap:8px;align-items:center;padding:5px 8px;cursor:pointer}
#catalog .n{font-variant-numeric:tabular-nums;color:var(--muted);font-size:13px}
#catalog .off{color:var(--muted)}
.problem{color:#7a1a14;font-size:14px;margin:0}
table{border-collapse:collapse;width:100%}
th,td{padding:6px 8px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{background:var(--head);font-weight:600}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.n b{font-size:17px}
td .why{display:block;font-size:13px;color:var(--muted)}
td .share{display:block;font-size:12px;color:var(--muted)}
td.name{overflow-wrap:anywhere}
td.n .why{white-space:normal}
td details{font-size:13px;color:var(--muted)}
td details summary{cursor:pointer;color:var(--link)}
.how{display:block;font-size:14px}
@media (max-width:600px){
 #totals thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
 #totals tr{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);border-bottom:1px solid var(--line);padding:4px 0}
 #totals td{border:0;min-width:0}
 #totals td:first-child{grid-column:1/-1}
 #totals td.n{text-align:left}
 #totals td.n::before{content:attr(data-label);display:block;font-size:12px;font-weight:600;color:var(--muted)}
}
""".strip()

SCRIPT = """
(function () {
  "use strict";
  var doc = JSON.parse(document.getElementById("data").textContent);
  var R = doc.rules, servers = doc.servers;
  // Lookup tables without a prototype: a pasted name such as "constructor" or "__proto__" finds nothing.
  var byName = Object.create(null), byPackage = Object.create(null), byUrl = Object.create(null);
  var own = function (o, k) { return Object.prototype.hasOwnProperty.call(o, k); };
  servers.forEach(function (s, i) {
    s.i = i;
    byName[s.name.toLowerCase()] = s;
    if (s.package) { byPackage[s.package] = s; }
    if (s.url) { byUrl[s.url.replace(/\\/+$/, "")] = s; }
  });
  var $ = function (id) { return document.getElementById(id); };
  var picked = {}, mode = "pick";

  // Pasted text is untrusted: controls, bidi and invisible format characters are shown as \\uXXXX
  // (the set harness.util.untrusted escapes), then HTML metacharacters become character references.
  var UNSAFE = new RegExp("[" + R.unsafeChars + "]", "gu");
  function visible(v) {
    return String(v).replace(UNSAFE, function (c) { return "\\\\u" + c.codePointAt(0).toString(16).padStart(4, "0"); });
  }
  function esc(v) { return visible(v).replace(/[&<>"']/g, function (c) { return "&#" + c.charCodeAt(0) + ";"; }); }
  function num(v) { return Number(v).toLocaleString("en-US"); }
  var SHOWN = 500, NAME = 120;
  function cut(v) { v = visible(v); return v.length > NAME ? v.slice(0, NAME - 1) + "…" : v; }
  function figure(t) { return (t.floor ? "≥ " : "") + num(t.tokens); }
  function pct(tokens) {
    var v = tokens * 100 / doc.context;
    return (v > 0 && v < 0.05 ? "<0.1" : v.toFixed(1)) + "% of 200k";
  }

  function bare(arg) {
    var a = arg.trim();
    var at = a.lastIndexOf("@");
    if (at > 0) { a = a.slice(0, at); }
    return a.split("==")[0];
  }

  function match(entry) {
    if (entry.url) {
      var u = byUrl[entry.url.replace(/\\/+$/, "")];
      if (u) { return u; }
    }
    var parts = [entry.command].concat(entry.args || []);
    for (var k = 0; k < parts.length; k += 1) {
      if (typeof parts[k] === "string" && byPackage[bare(parts[k])]) { return byPackage[bare(parts[k])]; }
    }
    return byName[entry.name.toLowerCase()] || null;
  }

  function bytes(text) { return new TextEncoder().encode(text).length; }

  // JSONC: comments dropped and a comma before } or ] dropped, both only outside strings. One pass.
  function stripJsonc(text) {
    var out = [], i = 0, inString = false, comma = -1;
    while (i < text.length) {
      var c = text[i], d = text[i + 1];
      if (inString) {
        out.push(c);
        if (c === "\\\\") { out.push(d || ""); i += 2; continue; }
        if (c === '"') { inString = false; }
        i += 1;
      } else if (c === "/" && d === "/") { while (i < text.length && text[i] !== "\\n") { i += 1; } }
      else if (c === "/" && d === "*") { i = text.indexOf("*/", i + 2); i = i < 0 ? text.length : i + 2; }
      else {
        if ((c === "}" || c === "]") && comma >= 0) { out[comma] = ""; }
        if (c === ",") { comma = out.length; } else if (!/\\s/.test(c)) { comma = -1; }
        if (c === '"') { inString = true; }
        out.push(c); i += 1;
      }
    }
    return out.join("");
  }

  function entriesOf(text, client) {
    var rule = R.clients[client], parsed;
    var size = bytes(text);
    if (size > R.maxConfigBytes) { return { problem: "larger than " + num(R.maxConfigBytes) + " bytes, the most audit reads" }; }
    try { parsed = JSON.parse(text); } catch (strict) {
      // comments and trailing commas are read only in files as small as audit's JSON5 reader takes
      if (size > R.maxJsoncBytes) { return { problem: "not JSON: " + strict.message + " (comments and trailing commas are read up to " + num(R.maxJsoncBytes) + " bytes)" }; }
      try { parsed = JSON.parse(stripJsonc(text)); } catch (err) { return { problem: "not JSON: " + err.message }; }
    }
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) { return { problem: "the top level is not an object" }; }
    var map = parsed[rule.serversKey];
    if (map === undefined) {
      var other = rule.serversKey === "servers" ? "mcpServers" : "servers";
      return { problem: "no " + rule.serversKey + " object" + (parsed[other] ? " (this file has " + other +
        ": pick the client it is for)" : "") };
    }
    if (!map || typeof map !== "object" || Array.isArray(map)) { return { problem: rule.serversKey + " is not an object" }; }
    var out = [];
    Object.keys(map).forEach(function (name) {
      var raw = map[name], entry = { name: name, problems: [] };
      if (!raw || typeof raw !== "object" || Array.isArray(raw)) { entry.problems.push("the entry is not an object"); out.push(entry); return; }
      if (rule.disabledKey && raw[rule.disabledKey] === true) { entry.disabled = true; }
      if (rule.enabledKey && raw[rule.enabledKey] === false) { entry.disabled = true; }
      entry.alwaysLoad = rule.alwaysLoad && raw.alwaysLoad === true;
      var urlKey = rule.urlKeys.filter(function (key) { return own(raw, key); })[0];
      if (typeof raw[rule.command] === "string") {
        entry.command = raw[rule.command];
        entry.args = Array.isArray(raw[rule.args]) ? raw[rule.args].filter(function (a) { return typeof a === "string"; }) : [];
      } else if (urlKey && typeof raw[urlKey] === "string") {
        entry.url = raw[urlKey];
      } else {
        entry.problems.push("neither " + rule.command + " nor a URL");
      }
      if (rule.typeKey && raw[rule.typeKey] !== undefined && !own(rule.typeMap, raw[rule.typeKey])) {
        entry.problems.push("unknown transport " + String(raw[rule.typeKey]).slice(0, 40));
      }
      out.push(entry);
    });
    return { entries: out };
  }

  function members() {
    if (mode === "pick") {
      return Object.keys(picked).map(function (i) {
        var s = servers[i];
        return { name: s.name, server: s, alwaysLoad: false };
      });
    }
    var got = entriesOf($("config").value, $("client").value);
    $("config-problem").textContent = got.problem ? "Cannot read this config: " + got.problem : "";
    return (got.entries || []).filter(function (e) { return !e.disabled; }).map(function (e) {
      return { name: e.name, server: e.problems.length ? null : match(e), alwaysLoad: e.alwaysLoad,
               problems: e.problems };
    });
  }

  function sum(list, value) {
    var tokens = 0, floor = false, missing = [];
    list.forEach(function (m) {
      var v = value(m);
      if (v === null || v === undefined) { floor = true; missing.push(m.name); }
      else { tokens += v[0]; floor = floor || v[1]; }
    });
    return { tokens: tokens, floor: floor, missing: missing };
  }

  function whole(m) { return m.server && m.server.tokens !== undefined ? [m.server.tokens, false] : null; }
  function atStart(m) {
    if (m.alwaysLoad) { return whole(m); }
    return m.server && m.server.session ? [m.server.session[0], m.server.session[1]] : null;
  }

  function cell(total, note) {
    return '<td class="n" data-tokens="' + total.tokens + '" data-floor="' + total.floor + '"><b>' + figure(total) +
      '</b><span class="share">' + pct(total.tokens) + "</span>" + (note ? '<span class="why">' + esc(note) + "</span>" : "") + "</td>";
  }

  function draw() {
    var list = members();
    var total = sum(list, whole);
    var posture = R.claudePostures[$("posture").value || 0];
    var rows = [];
    Object.keys(R.clients).forEach(function (id) {
      var c = R.clients[id], up, every = cell(total, ""), how, label;
      if (id === "claude-code") {
        how = posture.reason;
        label = posture.kind === R.deferred ? "defers definitions: names up front" : "loads every definition";
        if (posture.kind === R.deferred) {
          up = cell(sum(list, atStart), "tool names + instructions (deferred-load/v1)");
        } else {
          up = cell(total, "every definition");
        }
      } else if (c.record === "paid-in-full") {
        how = c.statement;
        label = "loads every definition (no deferral on record)";
        up = cell(total, "every definition");
      } else {
        how = c.statement + " " + c.leavesOpen;
        label = "on record as deferring; what enters the context is not";
        up = '<td class="n"><span class="why">not on record</span></td>';
        // what a deferring client's request carries is on no record: the configured total, said as such
        every = '<td class="n" data-tokens="' + total.tokens + '" data-floor="' + total.floor + '"><span class="why">' +
          "not on record; the configured definitions total " + figure(total) + "</span></td>";
      }
      rows.push('<tr data-client="' + id + '"><td><b>' + esc(c.name) + '</b><span class="how">' + esc(label) +
        "</span><details><summary>why</summary>" + esc(how) + "</details></td>" +
        up.replace("<td ", '<td data-label="Up front" ') + every.replace("<td ", '<td data-label="Every request" ') + "</tr>");
    });
    $("totals").tBodies[0].innerHTML = list.length ? rows.join("") :
      '<tr><td colspan="3">Pick a server or paste a config to see what it costs.</td></tr>';
    $("explain").textContent = total.missing.length ? "≥ marks a floor: no published number for " +
      total.missing.slice(0, SHOWN).map(cut).join(", ") + (total.missing.length > SHOWN ? " and " +
      num(total.missing.length - SHOWN) + " more" : "") + "." : "";
    // The totals count every entry; the page draws at most SHOWN rows and names, each cut to a line.
    $("servers").tBodies[0].innerHTML = list.slice(0, SHOWN).map(function (m) {
      var s = m.server;
      var name = s ? '<a href="' + esc(s.href) + '">' + esc(s.name) + "</a>" + (s.name !== m.name ? ' <span class="why">as ' +
        esc(cut(m.name)) + "</span>" : "") : esc(cut(m.name)) + ' <span class="why">' +
        esc(m.problems && m.problems.length ? m.problems.join("; ") : "not in the catalog") + "</span>";
      var tokens = s && s.tokens !== undefined ? num(s.tokens) : (s ? esc(s.status) : "—");
      var start = s && s.session ? (s.session[1] ? "≥ " : "") + num(s.session[0]) : "—";
      return '<tr data-name="' + esc(cut(m.name)) + '"><td class="name">' + name + (m.alwaysLoad ? ' <span class="why">alwaysLoad</span>' : "") +
        '</td><td class="n">' + tokens + '</td><td class="n">' + start + "</td></tr>";
    }).join("") + (list.length > SHOWN ? '<tr><td colspan="3" class="why">and ' + num(list.length - SHOWN) +
      " more entries, counted in the totals above</td></tr>" : "");
  }

  function drawCatalog() {
    var q = $("find").value.trim().toLowerCase();
    var shown = servers.filter(function (s) {
      return !q || s.name.toLowerCase().indexOf(q) >= 0 || (s.category || "").indexOf(q) >= 0 || (s.package || "").toLowerCase().indexOf(q) >= 0;
    }).slice(0, 300);
    $("catalog").innerHTML = shown.map(function (s) {
      var n = s.tokens !== undefined ? num(s.tokens) : s.status;
      return '<li><label' + (s.tokens === undefined ? ' class="off"' : "") + '><input type="checkbox" value="' + s.i + '"' +
        (picked[s.i] ? " checked" : "") + '><span>' + esc(s.name) + '</span><span class="n">' + esc(n) + "</span></label></li>";
    }).join("");
  }

  function tab(which) {
    mode = which;
    $("tab-pick").setAttribute("aria-selected", String(which === "pick"));
    $("tab-paste").setAttribute("aria-selected", String(which === "paste"));
    $("pick").hidden = which !== "pick";
    $("paste").hidden = which !== "paste";
    draw();
  }

  $("posture").innerHTML = R.claudePostures.map(function (p, i) { return '<option value="' + i + '">' + esc(p.label) + "</option>"; }).join("");
  $("catalog").addEventListener("change", function (event) {
    var i = event.target.value;
    if (event.target.checked) { picked[i] = true; } else { delete picked[i]; }
    draw();
  });
  $("find").addEventListener("input", drawCatalog);
  $("config").addEventListener("input", draw);
  $("client").addEventListener("change", draw);
  $("posture").addEventListener("change", draw);
  $("tab-pick").addEventListener("click", function () { tab("pick"); });
  $("tab-paste").addEventListener("click", function () { tab("paste"); });
  drawCatalog();
  draw();
}());
""".strip()
