"""The report as GitHub Markdown, for a pull-request comment or a job summary.

Every value passes through ``harness.publish.mdescape.md`` — the one Markdown escaping function of
the project — so nothing a config or a server holds can break a table or inject markup.
"""

from __future__ import annotations

from harness.publish.mdescape import md


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


def _num(value: object) -> str:
    return "—" if value is None else f"{value:,}"


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"
