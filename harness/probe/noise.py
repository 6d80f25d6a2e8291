"""What a server sent that this client cannot use — a non-JSON line, a non-JSON-RPC event, a reply to no request
— counted with a sample in one ``Noise``, so count and sample never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.probe import redact
from harness.probe.limits import TransportLimitExceeded

SAMPLE_SIZE = 3
SAMPLE_CHARS = 120


@dataclass
class Noise:
    """``count`` things skipped, the first ``SAMPLE_SIZE`` as ``sample`` (redacted, cut); past ``limit`` the
    error names them as ``what``."""

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
