"""The audit report for a terminal: one line per session, then servers, then details; and the live ``Running`` screen.
"""

from __future__ import annotations

import io
import os
import shutil
import sys
import textwrap
import time

from rich import box
from rich.console import Console
from rich.live import Live
from rich.table import Table
from rich.text import Text

from harness.audit.changed import row_line
from harness.audit.deferral import VARIABLES
from harness.audit.suggest import row_lines
from harness.util.untrusted import escape, laid_out

WIDTH = 100  # when neither COLUMNS nor a terminal says otherwise
MIN_WIDTH = 40


def width() -> int:
    """The report's width: ``COLUMNS``, else the terminal's, else :data:`WIDTH`."""
    raw = os.environ.get("COLUMNS", "")
    if raw.isdigit() and int(raw) > 0:
        return max(int(raw), MIN_WIDTH)
    if sys.stdout.isatty():
        return max(shutil.get_terminal_size((WIDTH, 24)).columns, MIN_WIDTH)
    return WIDTH


def render(report: dict, color: bool = False, columns: int | None = None) -> str:
    """The whole report as text, laid out for ``columns`` (default :func:`width`)."""
    buffer = io.StringIO()
    console = Console(file=buffer, width=columns or width(), highlight=False, markup=False, emoji=False,
                      color_system="standard" if color else None, force_terminal=color, soft_wrap=False)
    _header(console, report)
    _who_pays(console, report)
    _servers(console, report)
    console.print()
    _line(console, "Details", style="bold")
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
    """One logical line, escaped and wrapped at the console's width; a longer word stays whole."""
    text = escape("".join(str(p) for p in parts))
    indent = " " * (len(text) - len(text.lstrip(" ")) + 2)
    wrapped = textwrap.fill(text, console.width, subsequent_indent=indent, break_long_words=False,
                            break_on_hyphens=False, drop_whitespace=True)
    console.print(Text(wrapped, style=style or ""), overflow="ignore", crop=False)


def _header(console: Console, report: dict) -> None:
    found = sum(1 for s in report["searched"] if s["state"] != "absent")
    _line(console, f"mcp-context-cost audit — {report['encoding']}, context window {report['contextWindow']:,} tokens",
          style="bold")
    _line(console, f"looked at {len(report['searched'])} locations, found {found} config file(s); "
          f"{report['summary']['measuredServers']} of {report['summary']['distinctServers']} distinct server(s) measured "
          f"(isolation: {report['isolation']})")


def _who_pays(console: Console, report: dict) -> None:
    """One line per session: what it loads up front and what every request carries."""
    if not report["sessions"]:
        return
    console.print()
    _line(console, "Who pays what", style="bold")
    context = report["contextWindow"]
    for session in report["sessions"]:
        _line(console, f"  {session_line(session, context)}")


def session_line(session: dict, context: int) -> str:
    """``<client session>: up front …; every request …`` — one sentence per session."""
    name = session["label"]
    total = session["total"]
    if total is None:
        return f"{name}: no total — {session['refused']}"
    figure = f"{total['display']} tokens ({_pct(total['share'])} of {context:,})"
    floor = f" (a floor: no number for {', '.join(total['unmeasured'][:3])})" if total["floor"] else ""
    record = (session.get("record") or {}).get("record")
    if session["client"] == "claude-code":
        deferral = session.get("deferral") or {}
        kind = (deferral.get("posture") or {}).get("posture")
        if kind == "deferred":
            pinned = [p for p in deferral.get("alwaysLoad") or []]
            pinned_text = (f" except {len(pinned)} alwaysLoad server(s), loaded in full" if pinned else "")
            return (f"{name}: up front, tool names only (definitions deferred{pinned_text}); every request's tools "
                    f"array carries {figure}{floor}")
        if kind == "loads-up-front":
            return f"{name}: {figure} up front and in every request{floor}"
        return f"{name}: every request's tools array carries {figure}{floor}; up front: {deferral.get('verdict', 'see below')}"
    if record == "paid-in-full":
        return f"{name}: {figure} up front and in every request{floor}"
    if record == "on-record-deferring":
        return (f"{name}: the configured definitions total {figure}{floor}; the client is on record as deferring, "
                "what enters its context is not")
    return f"{name}: the configured definitions total {figure}{floor}"


def _servers(console: Console, report: dict) -> None:
    """Each distinct server once, heaviest first, with the configs naming it."""
    found: dict[tuple, dict] = {}
    for config in report["configs"]:
        for server in config["servers"]:
            key = (server["identity"] or f"{config['path']}#{server['name']}", server["name"])
            item = found.setdefault(key, {**server, "configs": []})
            if config["path"] not in item["configs"]:
                item["configs"].append(config["path"])
    if not found:
        return
    console.print()
    _line(console, "Servers", style="bold")
    table = Table(box=box.SIMPLE, show_edge=False, pad_edge=False, expand=False)
    table.add_column("server", no_wrap=True, overflow="ignore")
    table.add_column("status", no_wrap=True, overflow="ignore")
    for name in ("tokens", "tools", "share"):
        table.add_column(name, justify="right", no_wrap=True)
    ordered = sorted(found.values(), key=lambda s: (-(s["tokens"] or -1), s["name"]))
    for server in ordered:
        table.add_row(_t(server["name"]), _t(server["status"]), _t(_num(server["tokens"])),
                      _t(_num(server["toolCount"])), _t(_pct(server["share"])))
    console.print(table, overflow="ignore", crop=False)


class Running:
    """What the screen says while servers are measured: a live line on a terminal, finished lines only elsewhere."""

    def __init__(self, total: int, budget: float, stream=None) -> None:
        self.total, self.budget = total, budget
        self.console = Console(file=stream or sys.stderr, highlight=False, markup=False, emoji=False)
        self.running: dict[str, float] = {}
        self.done = 0
        self.live = Live(console=self.console, auto_refresh=True, refresh_per_second=2, transient=True,
                         get_renderable=self._status) if self.console.is_terminal else None

    def __enter__(self) -> "Running":
        if self.live is not None:
            self.live.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.live is not None:
            self.live.stop()

    def started(self, name: str) -> None:
        self.running[name] = time.monotonic()

    def ended(self, name: str) -> None:
        self.running.pop(name, None)
        self.done += 1

    def line(self, text: str) -> None:
        """A finished server's line (already escaped and redacted), above the live status."""
        self.console.print(Text(text), overflow="ignore", crop=False, soft_wrap=True)

    def _status(self) -> Text:
        now = time.monotonic()
        names = ", ".join(f"{escape(n)} ({int(now - t)} s)" for n, t in list(self.running.items())[:6])
        more = f" and {len(self.running) - 6} more" if len(self.running) > 6 else ""
        return Text(f"measuring {self.done}/{self.total} done; still running: {names or 'none'}{more} — budget "
                    f"{self.budget:g} s per server for the first attempt", style="dim")


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
    for server in config["servers"]:
        _line(console, f"  - {server['name']}: {server['status']}, {_num(server['tokens'])} tokens, "
              f"{_num(server['toolCount'])} tools ({_pct(server['share'])})")
        detail = _detail(server)
        if detail:
            _line(console, f"      {detail}")
    total = config["total"]
    _line(console, f"  total: {total['display']} tokens ({_pct(total['share'])} of {context:,})"
          + (f" — a floor: no number for {', '.join(total['unmeasured'])}" if total["floor"] else ""))
    if config["heaviestTools"]:
        tools = ", ".join(f"{t['server']}/{t['tool']} {t['tokens']:,}" for t in config["heaviestTools"][:5])
        _line(console, f"  heaviest tools: {tools}")
    for step in config["trimPlan"][:3]:
        approx = "≈ " if step["approximate"] else ""
        _line(console, f"  trim: {step['how']} → saves {approx}{step['saves']:,} tokens")


LAUNCH_LIMIT = 300  # characters of a launch line shown; the JSON report holds it whole


def _detail(server: dict) -> str:
    launch = server["launch"] or ""
    if len(launch) > LAUNCH_LIMIT:  # cut between words: what is shown is never a split word
        launch = launch[:LAUNCH_LIMIT].rsplit(" ", 1)[0] + " …"
    parts = [launch]
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
    for place in deferral["places"]:
        _line(console, f"  place {place['name']}: {place['state']}; sets (names only): "
              f"{', '.join(_relevant(place['envNames'])) or '—'}")
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
    shown = [n for n in names if n in VARIABLES]
    rest = len(names) - len(shown)
    return shown + ([f"+{rest} other name(s)"] if rest else [])


def _changed(console: Console, changed: dict | None) -> None:
    """``--changed``: one line per configured server, or the named problem."""
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
