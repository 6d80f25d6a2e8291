"""The audit report as GitHub Markdown, every value escaped by ``harness.pages.text.md``."""

from __future__ import annotations

from harness.pages.text import md
from harness.audit.suggest import placements, row_lines, table


def render(report: dict) -> str:
    """The whole report as Markdown."""
    out = [f"## MCP context cost: audit of {len(report['configs'])} config file(s)", "",
           f"o200k_base tokens of each server's canonical `tools/list`; share of a {report['contextWindow']:,}-token "
           "window. A total marked ≥ is a floor: a server in it has no number.", ""]
    for gate in report.get("gates", []):
        out.append(f"- **{md(gate['gate'])}: {'passed' if gate['passed'] else 'failed'}**")
        out += [f"  - {md(reason)}" for reason in gate["reasons"][:20]]
    out.append("")
    for session in report["sessions"]:
        out += _session(session)
    for config in report["configs"]:
        out += _config(config)
    out += _changed(report.get("changed")) + _suggest(report.get("suggest"))
    out += ["### Records (what each vendor states; not measurements)", ""]
    for record in report["records"]:
        sources = ", ".join(f"{md(s['address'])} (read {md(s['read'])})" for s in record["sources"][:2])
        out.append(f"- **{md(record['name'])}**: {md(record['record'])} — {md(record['statement'])}"
                   + (f" Sources: {sources}" if sources else ""))
    return "\n".join(out).rstrip() + "\n"


def _session(session: dict) -> list[str]:
    total = session["total"]
    figure = f"{md(total['display'])} tokens" if total else f"no total — {md(session['refused'])}"
    out = [f"### {md(session['label'])}: {figure}", "", f"Configs: {md(', '.join(session['configs']))}", ""]
    if session["servers"]:
        out += ["| server | source | status | tokens |", "|---|---|---|---:|"]
        out += [f"| {md(s['name'])} | {md(s['source'])} | {md(s['status'])} | {_num(s['tokens'])} |"
                for s in session["servers"]]
        out.append("")
    out += [f"- not loaded: {md(x['name'])} ({md(x['source'])}): {md(x['reason'])}" for x in session["excluded"]]
    deferral = session["deferral"]
    if deferral:
        out.append(f"- deferral: {md(deferral['verdict'])}")
        out += [f"- refusal **{md(r['kind'])}**: {md(r['detail'])}" for r in deferral["refusals"]]
        out += [f"- alwaysLoad: {md(p['name'])} ({_num(p['tokens'])} tokens)" for p in deferral["alwaysLoad"]]
    elif session["record"]:
        out.append(f"- on record: {md(session['record']['record'])} — {md(session['record']['statement'])}")
    return out + [""]


def _config(config: dict) -> list[str]:
    total = config["total"]
    out = [f"#### {md(config['path'])} ({md(config['client'] or 'client unknown')}): {md(total['display'])} tokens",
           ""]
    if config["error"]:
        out += [f"Unreadable: {md(config['error'])}", ""]
    if config["servers"]:
        out += ["| server | status | tokens | tools | share |", "|---|---|---:|---:|---:|"]
        out += [f"| {md(s['name'])} | {md(s['status'])} | {_num(s['tokens'])} | {_num(s['toolCount'])} | "
                f"{_pct(s['share'])} |" for s in config["servers"]]
        out.append("")
    if config["heaviestTools"]:
        tools = ", ".join(f"{md(t['server'])}/{md(t['tool'])} {t['tokens']:,}" for t in config["heaviestTools"][:5])
        out += [f"Heaviest tools: {tools}", ""]
    return out


def _changed(changed: dict | None) -> list[str]:
    """``--changed``: a row per configured server, or the named problem."""
    if changed is None:
        return []
    out = [f"### Changed since published ({md(changed['method'])})", "",
           f"Joined by canonicalSha256, never by name. Capture index: {md(changed['source'])}", ""]
    if changed["problem"]:
        return out + [f"**Problem:** {md(changed['problem'])} — no server was joined.", ""]
    out += ["| server | state | this capture | current capture | moving to current |", "|---|---|---|---|---:|"]
    for row in changed["servers"]:
        name = md(row["name"]) + (f" (published as {md(row['publishedAs'])})"
                                  if row["publishedAs"] not in (None, row["name"]) else "")
        state = md(row["state"] or f"no capture to join ({row['status']})")
        this = f"{row['publishedOn']}, {row['tokens']:,} tokens" if row["state"] == "behind" else "—"
        now = f"since {row['currentSince']}, {row['currentTokens']:,} tokens" if row["currentSince"] else "—"
        move = f"{row['delta']:+,} tokens per request" if row["delta"] is not None else "—"
        out.append(f"| {name} | {state} | {this} | {now} | {move} |")
    return out + [""]


def _suggest(section: dict | None) -> list[str]:
    """``--suggest``: per server, each tool's place (heaviest first) and the advice, or the problem."""
    if section is None:
        return []
    out = [f"### Tool shape ({md(section['method'])})", "",
           "Percentile of each count among every tool measured by mcp-context-cost (nearest rank). Only "
           f"descriptions draw advice: a schema is what the tool can do. Baseline: {md(section['source'])}", ""]
    if section["problem"]:
        return out + [f"**Problem:** {md(section['problem'])} — no tool was placed.", ""]
    for row in section["servers"]:
        out += [f"#### {md(', '.join(row['names']))}", ""] + table(placements(row), md, 30) + [""]
        out += [f"- {line}" for line in row_lines(row, md)] + [""]
    return out


def _num(value: object) -> str:
    return "—" if value is None else f"{value:,}"


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"
