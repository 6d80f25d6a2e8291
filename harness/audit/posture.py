"""The ``deferral`` section of a Claude Code session report: places, posture, threshold range, refusals, conditions.

Rule: docs/METHODOLOGY.md, "Who pays the number, and where it is deferred away".
"""

from __future__ import annotations

from harness.audit import deferral, threshold
from harness.audit.claude_settings import Place
from harness.audit.figures import Row
from harness.audit.identity import same_values
from harness.audit.policy import Policy
from harness.audit.client_statements import statement_for
from harness.audit.sessions import Session

CONDITIONS = (
    "Microsoft Foundry deployments hosted on Azure reject tool search server-side: there the full number is paid",
    "on Google Cloud's Agent Platform below the Claude 4.5 generation the full number is paid",
    "a model without support for tool_reference blocks (models earlier than Claude Opus 4 and Sonnet 4, Haiku) loads "
    "every definition up front",
    "a tool whose _meta carries \"anthropic/alwaysLoad\": true loads at session start (per-tool form, not read from a "
    "capture)",
    "from v2.1.227 managed settings can keep tool search on under CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS; that "
    "override has no effect on a cloud provider or through a Claude apps gateway, and remote settings, MDM policy and "
    "a policy helper are not opened here",
)


def collapsed(rows: list[Row]) -> list[str]:
    """Names of members that share an identity with another member but hand it different values."""
    by_key: dict[str, list[Row]] = {}
    for row in rows:
        if row.key:
            by_key.setdefault(row.key, []).append(row)
    names = []
    for group in by_key.values():
        first = group[0].entry
        if any(not same_values(first, other.entry) for other in group[1:]):
            names += [r.entry.name for r in group]
    return names


def section(session: Session, rows: list[Row], places: list[Place], policy: Policy, band: threshold.Band,
            context: int, managed_path: str) -> dict:
    """The ``deferral`` object of a Claude Code session report (rows: the session's members)."""
    posture = deferral.resolve(places)
    refusals = [posture.refusal] if posture.refusal else []
    if session.refused:
        refusals.append(deferral.Refusal(session.refused_kind or deferral.MANAGED_MCP_UNREADABLE, session.refused))
    pinned = [r for r in rows if r.entry.always_load]
    deferrable = [r for r in rows if not r.entry.always_load]
    verdict = None
    if posture.kind == deferral.THRESHOLD and posture.percent is not None and not session.refused:
        merged = collapsed(deferrable)
        if merged:
            refusals.append(deferral.Refusal(deferral.COLLAPSED, "the stack's total could not be established: "
                                             f"{', '.join(sorted(set(merged)))} share one measurement with different "
                                             "env or header values"))
        else:
            parts = [(r.cost.tokens if r.cost else None, r.outcome.sha256 if r.cost and not r.cost.filtered and
                      r.outcome else None) for r in deferrable]
            verdict = threshold.compare(parts, posture.percent, context, band)
            if verdict.verdict == threshold.STRADDLES:
                refusals.append(deferral.Refusal(deferral.STRADDLES, _straddle(verdict, posture.percent)))
    return {
        "places": [p.public() for p in places],
        "posture": posture.to_json(),
        "threshold": verdict.to_json() if verdict else None,
        "band": band.source if posture.kind == deferral.THRESHOLD else None,
        "alwaysLoad": [{"name": r.entry.name, "tokens": r.cost.tokens if r.cost else None, "status": r.status}
                       for r in pinned],
        "managedMcp": {"state": session.managed_state, "path": managed_path},
        "policy": policy.to_json(),
        "refusals": [r.to_json() for r in refusals],
        "verdict": _verdict(posture, verdict, refusals, pinned),
        "conditions": list(CONDITIONS),
        "record": statement_for("claude-code"),
    }


def _straddle(verdict: threshold.Verdict, percent: int) -> str:
    high = "unbounded (a server has no number)" if verdict.high is None else f"{round(verdict.high):,}"
    return (f"converted through the divergence band the stack is {round(verdict.low):,} to {high} Claude tokens, "
            f"across the {percent}% threshold of {round(verdict.threshold):,}: whether it defers cannot be said")


def _verdict(posture: deferral.Posture, verdict, refusals: list, pinned: list[Row]) -> str:
    pinned_note = f"; {len(pinned)} alwaysLoad server(s) load at session start whatever the setting" if pinned else ""
    if refusals:
        return "refused: " + "; ".join(r.kind for r in refusals) + " — see refusals" + pinned_note
    if posture.kind == deferral.THRESHOLD:
        state = "deferred (the stack clears the threshold)" if verdict.verdict == threshold.ABOVE else \
            "loads up front (the stack stays under the threshold)"
        return f"{state}{pinned_note}"
    word = {deferral.DEFERRED: "deferred", deferral.UP_FRONT: "loads up front"}[posture.kind]
    return (f"{word}: {posture.reason}{pinned_note}. Deferred or not, every definition still travels in every "
            "request's tools array; deferral decides what enters the context window")
