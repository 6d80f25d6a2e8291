"""The capability probe: tools listed without and with ``roots``/``elicitation`` declared, compared by name.
docs/METHODOLOGY.md, "What the client declares".
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from harness.core.canonical import stringify
from harness.core.counting import count_tools
from harness.probe import launch
from harness.probe.measure import Measurement, measure
from harness.probe.session import converse
from harness.probe.target import Target

METHOD = "capability-probe/v1"
DECLARED: dict[str, dict] = {"roots": {}, "elicitation": {}}
ANSWERS = {"roots/list": {"roots": []}, "elicitation/create": {"action": "decline"}}


class AnsweringTransport:
    """A transport that answers the server requests ``DECLARED`` makes legitimate, passing on the rest."""

    def __init__(self, inner, capture):
        self.inner, self.capture = inner, capture

    async def send(self, message: dict) -> None:
        await self.inner.send(message)

    def __getattr__(self, name: str):
        # note_noise, listen, … : everything else is the inner transport's own.
        return getattr(self.inner, name)

    async def receive(self):
        while True:
            incoming = await self.inner.receive()
            message = getattr(incoming, "message", None)
            if not (isinstance(message, dict) and "id" in message and message.get("method") in ANSWERS):
                return incoming
            self.capture.server_requests.append(message["method"])
            await self.inner.send({"jsonrpc": "2.0", "id": message["id"], "result": ANSWERS[message["method"]]})


async def declaring(transport, capture, limits) -> None:
    """``session.converse`` declaring ``DECLARED`` and answering its requests."""
    await converse(AnsweringTransport(transport, capture), capture, limits, capabilities=DECLARED)


def launcher_for(target: Target, isolation: str, conversation):
    """A ``measure`` launcher running ``conversation``, otherwise the sweep's launch."""
    if target.url:
        from harness.probe import remote  # httpx2 is slow to import and only a url target needs it

        return functools.partial(remote.probe_remote, conversation=conversation)

    async def stdio(t, budget, limits, version, **kwargs):
        kwargs.setdefault("conversation", conversation)
        return await launch.launch_once(t, budget, limits, version, pass_declared_values=False, isolation=isolation,
                                        **kwargs)
    return stdio


@dataclass
class Pair:
    """Both postures' measurements of one target."""

    target: Target
    without: Measurement
    with_: Measurement

    @property
    def compared(self) -> bool:
        """Both postures listed tools and the plain one is stable."""
        return self.without.capture.ok and self.with_.capture.ok and self.without.status != "dynamic"

    @property
    def status_changed(self) -> bool:
        return _posture_status(self.without.status) != _posture_status(self.with_.status)


def _posture_status(status: str) -> str:
    return "measured" if status == "dynamic" else status


async def probe(target: Target, isolation: str = "host") -> Pair:
    """Measure ``target`` without ``DECLARED`` (two launches) and with it (one)."""
    plain = await measure(target, isolation=isolation, pass_declared_values=False, dual=True,
                          launcher=launcher_for(target, isolation, converse))
    richer = await measure(target, isolation=isolation, pass_declared_values=False, dual=False,
                           launcher=launcher_for(target, isolation, declaring))
    return Pair(target, _redacted(plain), _redacted(richer))


def _redacted(measurement: Measurement) -> Measurement:
    """``measurement`` with its tool list redacted, as a record's is."""
    capture = measurement.capture
    if capture.tools is not None:
        capture.tools = measurement.secrets.json(capture.tools)[0]
    return measurement


def difference(without: list, with_: list) -> dict | None:
    """How the declaring posture's tools differ, by name; ``None`` when identical."""
    if stringify(without) == stringify(with_):
        return None
    a, b = count_tools(without), count_tools(with_)
    plain = {_name(t.name): (stringify(tool), t.tokens) for t, tool in zip(a.tools, without)}
    rich = {_name(t.name): (stringify(tool), t.tokens) for t, tool in zip(b.tools, with_)}
    return {
        "gained": [{"name": n, "tokens": rich[n][1]} for n in rich if n not in plain],
        "lost": [{"name": n, "tokens": plain[n][1]} for n in plain if n not in rich],
        "changed": [{"name": n, "tokens": rich[n][1]} for n in rich if n in plain and rich[n][0] != plain[n][0]],
        "withoutCapabilities": _figure(a),
        "withCapabilities": _figure(b),
        "deltaTokens": b.totalTokens - a.totalTokens,
    }


def _figure(counted) -> dict:
    return {"totalTokens": counted.totalTokens, "toolCount": counted.toolCount, "canonicalSha256": counted.canonicalSha256}


def _name(name: object) -> str:
    return name if isinstance(name, str) else stringify(name)

