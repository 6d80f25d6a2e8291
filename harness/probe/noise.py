"""What a server sent that is not a JSON-RPC message this client can use: one counter and its sample.

Noise is a non-JSON stdout line, a Server-Sent Events ``data`` payload that is not JSON-RPC (a
``ping`` event), or a reply whose ``id`` matches no request this client sent (issue #11, items 2
and 5). Every place that skips such a thing calls ``Noise.add``, so the count and the sample can
never disagree (the record quotes ``sample[0]`` whenever ``count`` is positive).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.probe import redact
from harness.probe.limits import TransportLimitExceeded

SAMPLE_SIZE = 3
SAMPLE_CHARS = 120


@dataclass
class Noise:
    """``count``: how many things were skipped; ``sample``: the first ``SAMPLE_SIZE`` of them, each
    cut to ``SAMPLE_CHARS`` characters after redaction; ``limit``: how many are tolerated (``max_noise_lines``);
    ``what``: how the limit's error names them (e.g. ``non-JSON stdout lines``)."""

    limit: int
    what: str = "non-JSON-RPC lines or events"
    count: int = 0
    sample: list[str] = field(default_factory=list)

    def add(self, text: str) -> None:
        """Count ``text`` as noise. Raises ``TransportLimitExceeded`` once ``count`` passes ``limit``."""
        self.count += 1
        if len(self.sample) < SAMPLE_SIZE:
            self.sample.append(redact.cut(text, SAMPLE_CHARS))  # redacted before the cut (issue #9)
        if self.count > self.limit:
            raise TransportLimitExceeded(f"more than {self.limit} {self.what}")
