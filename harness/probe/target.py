"""What to measure: ``Target``, a launch command or a URL with the names (never values) it declares."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # resolve imports this module
    from harness.probe.resolve import Resolved


@dataclass(frozen=True)
class NotApplicable:
    """A declared reason this harness cannot run an entry, and the text its failure must contain."""

    reason: str
    evidence: str


@dataclass(frozen=True)
class Target:
    """One server to measure: ``command`` or ``url``, with declared names only. Set ``host_dirs`` and
    ``host_files`` only from what the person running the harness typed."""

    name: str  # the slug of results/<name>/
    command: str | None = None
    url: str | None = None
    env: tuple[str, ...] = ()
    set_env: tuple[tuple[str, str], ...] = ()  # fixed, non-secret pairs from the catalog, given as they are
    headers: tuple[str, ...] = ()
    timeout_seconds: float = 60.0  # the first attempt's budget
    needs_git: bool = False  # launch in a fresh git repository
    not_applicable: NotApplicable | None = None
    package: str | None = None
    cwd: str | None = None  # the Action's working-directory; under the sandbox only inside host_dirs
    host_dirs: tuple[str, ...] = ()
    transport: str | None = None  # "sse": declared HTTP+SSE; None: Streamable HTTP with its fallback
    host_files: tuple[tuple[str, str], ...] = ()  # (host path, path inside the sandbox)
    resolved: Resolved | None = field(default=None, compare=False)  # launches start from this install
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def launch(self) -> str:
        """The launch command, or the URL (the record's ``launchCommand``)."""
        return self.command if self.command is not None else str(self.url)
