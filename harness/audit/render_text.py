"""The report for people: rich tables readable at 100 columns.

Every string that came from a config or a server passes through ``harness.util.untrusted.escape``
and is handed to rich as a ``Text`` (never as markup), so no control character, escape sequence or
``[bold]``-style markup in it reaches the terminal as anything but visible characters. The laid-out
report passes through ``untrusted.laid_out``: a wrapped line or a folded cell can begin with an
untrusted word (a table row starts with a server's name at column 0), and a ``::`` there would be a
workflow command to a CI runner.
"""

from __future__ import annotations

import io
import textwrap

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from harness.util.untrusted import escape, laid_out

WIDTH = 100


def render(report: dict, color: bool = False) -> str:
    """The whole report as text (at most ``WIDTH`` columns)."""
    buffer = io.StringIO()
    console = Console(file=buffer, width=WIDTH, highlight=False, markup=False, emoji=False,
                      color_system="standard" if color else None, force_terminal=color, soft_wrap=False)
    _header(console, report)
    for config in report["configs"]:
        _config(console, config, report["contextWindow"])
    for session in report["sessions"]:
        _session(console, session, report["contextWindow"])
    _changed(console, report.get("changed"))
    _suggest(console, report.get("suggest"))
    _records(console, report["records"])
    _gates(console, report.get("gates", []))
    _nothing_measured(console, report)
    return laid_out(buffer.getvalue())


def _t(value: object, style: str | None = None) -> Text:
    return Text(escape("" if value is None else value), style=style or "")


def _line(console: Console, *parts: object, style: str | None = None) -> None:
    """One logical line, escaped, wrapped at ``WIDTH`` with continuation lines indented under it."""
    text = escape("".join(str(p) for p in parts))
    indent = " " * (len(text) - len(text.lstrip(" ")) + 2)
    wrapped = textwrap.fill(text, WIDTH, subsequent_indent=indent, break_long_words=True, break_on_hyphens=False,
                            drop_whitespace=True)
    console.print(Text(wrapped, style=style or ""), overflow="fold")


def _header(console: Console, report: dict) -> None:
    found = sum(1 for s in report["searched"] if s["state"] != "absent")
    _line(console, f"mcp-context-cost audit — {report['encoding']}, context window {report['contextWindow']:,} tokens",
          style="bold")
    _line(console, f"looked at {len(report['searched'])} locations, found {found} config file(s); "
          f"{report['summary']['measuredServers']} of {report['summary']['distinctServers']} distinct server(s) measured "
          f"(isolation: {report['isolation']})")


def _config(console: Console, config: dict, context: int) -> None:
    console.print()
    client = config["client"] or "client unknown"
    _line(console, f"Config {config['path']} ({client}, {config['scope']}): {config['state']}", style="bold")
    if config["error"]:
        _line(console, f"  {config['error']}")
    for note in config["notes"]:
        _line(console, f"  note: {note}")
    if not config["servers"]:
        return
    table = Table(box=box.SIMPLE, show_edge=False, pad_edge=False, expand=False)
    for name, justify in (("server", "left"), ("status", "left"), ("tokens", "right"), ("tools", "right"),
                          ("share", "right"), ("launch / notes", "left")):
        table.add_column(name, justify=justify, overflow="fold", max_width=44 if name == "launch / notes" else 24)
    for server in config["servers"]:
        table.add_row(_t(server["name"]), _t(server["status"]), _t(_num(server["tokens"])),
                      _t(_num(server["toolCount"])), _t(_pct(server["share"])), _t(_detail(server)))
    console.print(table)
    total = config["total"]
    _line(console, f"  total: {total['display']} tokens ({_pct(total['share'])} of {context:,})"
          + (f" — a floor: no number for {', '.join(total['unmeasured'])}" if total["floor"] else ""))
    if config["heaviestTools"]:
        tools = ", ".join(f"{t['server']}/{t['tool']} {t['tokens']:,}" for t in config["heaviestTools"][:5])
        _line(console, f"  heaviest tools: {tools}")
    for step in config["trimPlan"][:3]:
        approx = "≈ " if step["approximate"] else ""
        _line(console, f"  trim: {step['how']} → saves {approx}{step['saves']:,} tokens")


def _detail(server: dict) -> str:
    parts = [server["launch"]]
    if server["disabled"]:
        parts.append(f"disabled: {server['disabled']}")
    if server.get("trust"):  # each reason opens with its verdict but "not approved", which is said here
        trust = server["trust"]
        parts.append(("not approved: " if trust["state"] == "not-approved" else "") + trust["reason"])
    if server["alwaysLoad"]:
        parts.append("alwaysLoad")
    if server["envNames"]:
        parts.append("env: " + ", ".join(server["envNames"]))
    if server["filteredTools"]:
        parts.append(f"{server['filteredTools']} tool(s) filtered out")
    parts += [f"set-but-unevaluated {u}" for u in server["unevaluated"][:3]]
    parts += server["problems"][:3] + server["notes"][:2]
    return "; ".join(p for p in parts if p)


def _session(console: Console, session: dict, context: int) -> None:
    console.print()
    _line(console, f"Session: {session['label']} [{session['composition']}]", style="bold")
    _line(console, f"  configs: {', '.join(session['configs'])}")
    for server in session["servers"]:
        extra = f", allow: {server['allow']}" if "allow" in server else ""
        pinned = ", alwaysLoad" if server["alwaysLoad"] else ""
        _line(console, f"  - {server['name']} ({server['scope']} in {server['source']}): {server['status']}, "
              f"{_num(server['tokens'])} tokens{pinned}{extra}")
    for item in session["excluded"]:
        _line(console, f"  - not loaded: {item['name']} ({item['source']}): {item['reason']}")
    if session["total"] is None:
        _line(console, f"  total: none — {session['refused']}")
    else:
        total = session["total"]
        # "Every request carries" is said only where it is on record: Claude Code's documented mechanism
        # sends every definition in every request, and the paid-in-full clients load everything. What a
        # deferring client's backend sends is on no surface this project reads (methodology).
        paid = session["client"] == "claude-code" or (session["record"] or {}).get("record") == "paid-in-full"
        lead = "every request carries" if paid else "the configured servers' tool definitions total"
        _line(console, f"  {lead} {total['display']} tokens ({_pct(total['share'])} of {context:,})", style="bold")
    for note in session["notes"]:
        _line(console, f"  note: {note}")
    if session["deferral"]:
        _deferral(console, session["deferral"])
    elif session["record"]:
        record = session["record"]
        _line(console, f"  on record: {record['record']} — {record['statement']}")


def _deferral(console: Console, deferral: dict) -> None:
    _line(console, f"  deferral: {deferral['verdict']}")
    table = Table(box=box.SIMPLE, show_edge=False, pad_edge=False, title=None)
    for name in ("place", "state", "sets (names only)"):
        table.add_column(name, overflow="fold", max_width=60)
    for place in deferral["places"]:
        table.add_row(_t(place["name"]), _t(place["state"]), _t(", ".join(_relevant(place["envNames"])) or "—"))
    console.print(table)
    for reading in deferral["posture"]["readings"]:
        value = reading["reading"] or reading["jsonType"] or ""
        _line(console, f"  {reading['variable']}: {reading['state']} {value} {('in ' + reading['place']) if reading['place'] else ''}")
    for refusal in deferral["refusals"]:
        _line(console, f"  refusal [{refusal['kind']}]: {refusal['detail']}")
    for pinned in deferral["alwaysLoad"]:
        _line(console, f"  alwaysLoad: {pinned['name']} loads at session start ({_num(pinned['tokens'])} tokens)")
    if deferral["threshold"]:
        t = deferral["threshold"]
        high = "unbounded" if t["highTokens"] is None else f"{t['highTokens']:,}"
        _line(console, f"  threshold: {t['verdict']} — {t['lowTokens']:,}–{high} Claude tokens against "
              f"{t['thresholdTokens']:,} ({deferral['band']})")
    _line(console, f"  managed-mcp.json: {deferral['managedMcp']['state']} ({deferral['managedMcp']['path']})")
    for condition in deferral["conditions"]:
        _line(console, f"  condition (not readable from any file): {condition}")


def _relevant(names: list[str]) -> list[str]:
    from harness.audit.deferral import VARIABLES

    shown = [n for n in names if n in VARIABLES]
    rest = len(names) - len(shown)
    return shown + ([f"+{rest} other name(s)"] if rest else [])


def _changed(console: Console, changed: dict | None) -> None:
    """``--changed``: one line per configured server, or the named problem."""
    from harness.audit.changed import row_line

    if changed is None:
        return
    console.print()
    _line(console, f"Changed since published ({changed['method']}, joined by canonicalSha256, never by name)",
          style="bold")
    _line(console, f"  capture index: {changed['source']}")
    if changed["problem"]:
        _line(console, f"  problem: {changed['problem']} — no server was joined", style="bold")
    for row in changed["servers"]:
        _line(console, f"  {row_line(row)}")


def _suggest(console: Console, section: dict | None) -> None:
    """``--suggest``: per server, its suggestions or "Nothing unusual", or the named problem."""
    from harness.audit.suggest import row_lines

    if section is None:
        return
    console.print()
    _line(console, f"Tool shape ({section['method']}): each tool among every tool measured; only descriptions "
          "draw advice", style="bold")
    _line(console, f"  baseline: {section['source']}")
    if section["problem"]:
        _line(console, f"  problem: {section['problem']} — no tool was placed", style="bold")
        return
    base = section["baseline"]
    _line(console, f"  {base['tools']:,} tools of {base['servers']:,} server(s); descriptions: median "
          f"{base['medianDescriptionTokens']:,}, p90 {base['p90DescriptionTokens']:,} tokens")
    for row in section["servers"]:
        _line(console, f"  {', '.join(row['names'])} ({len(row['tools'])} tools):")
        for sentence in row_lines(row):
            _line(console, f"    {sentence}")


def _records(console: Console, records: list[dict]) -> None:
    if not records:
        return
    console.print()
    _line(console, "Records (what each vendor states; not measurements)", style="bold")
    for record in records:
        sources = "; ".join(f"{s['address']} (read {s['read']})" for s in record["sources"][:2])
        _line(console, f"  {record['name']}: {record['record']} — {record['statement']}")
        if sources:
            _line(console, f"    sources: {sources}")


def _nothing_measured(console: Console, report: dict) -> None:
    """With nothing measured the audit fails (exit 1, ``harness.audit.gates.exit_code``): say why
    and what to do next."""
    if report["summary"]["measuredServers"]:
        return
    configs = len(report["configs"])
    why = ("no MCP client config was found under HOME or here; name one with --config PATH "
           "(and --no-discover in CI)" if not configs else
           f"no server in the {configs} config file(s) could be measured; each one's status and notes say why")
    console.print()
    _line(console, f"nothing measured (exit 1): {why}", style="bold")


def _gates(console: Console, gates: list[dict]) -> None:
    if not gates:
        return
    console.print()
    for gate in gates:
        _line(console, f"gate {gate['gate']}: {'passed' if gate['passed'] else 'FAILED'}", style="bold")
        for reason in gate["reasons"]:
            _line(console, f"  {reason}")


def _num(value: object) -> str:
    return "—" if value is None else f"{value:,}"


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"
