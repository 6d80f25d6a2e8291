"""What to measure: a launch command or a remote URL, with the names it declares.

Built from a catalog entry, a CLI invocation or the GitHub Action's inputs; the probe layer needs
nothing else. Declared env and header *values* are never stored here — only names; header values
for remote entries are looked up from the environment at send time.
"""

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
    """``name``: slug used for ``results/<name>/``. Exactly one of ``command`` (a command line,
    split without a shell) or ``url`` (a Streamable HTTP endpoint). ``env``/``headers``: names only.
    ``timeout_seconds``: the first attempt's budget (seconds). ``needs_git``: run in a fresh git repo.
    ``set_env``: fixed, non-secret ``(name, value)`` pairs from the catalog (e.g.
    ``PUPPETEER_SKIP_DOWNLOAD=1``), given as they are in every isolation mode.
    ``cwd``: launch in this existing directory instead of a fresh temp one (the GitHub Action's
    ``working-directory``, so an author's ``node dist/index.js`` resolves against their checkout).
    Under ``sandbox`` it is used only when it lies in one of ``host_dirs`` (and is then read-only);
    otherwise the server starts in the fresh temp directory.
    ``resolved``: a ``harness.probe.resolve.Resolved`` — the ``npx``/``uvx`` package resolved once,
    which each launch starts from directly (``command`` stays what is recorded); ``None``: launch
    through the launcher.
    ``transport``: for a ``url`` target, ``"sse"`` when whoever wrote the entry declared the
    2024-11-05 HTTP+SSE transport (a client config's ``"type": "sse"``); ``None``: Streamable HTTP,
    falling back to HTTP+SSE as the transport specification describes.
    ``host_dirs``: host directories whoever built the target vouches for — a folder the person's own
    command names (``sandbox.named_paths``) — which the sandbox shows read-only, secret paths masked.
    ``host_files``: single host files vouched for the same way, ``(host path, path inside the
    sandbox)`` — the script a person's own command names, never its folder. Nothing else outside
    the sandbox's fixed set is ever bound in: never set these from a catalog entry, a client config
    or anything else someone other than the person running the harness wrote (a catalog command
    naming ``/tmp/x`` once bound the host's ``/tmp`` into the sandbox, and a config's ``cwd: /``
    bound the whole host writable).
    """

    name: str
    command: str | None = None
    url: str | None = None
    env: tuple[str, ...] = ()
    set_env: tuple[tuple[str, str], ...] = ()
    headers: tuple[str, ...] = ()
    timeout_seconds: float = 60.0
    needs_git: bool = False
    not_applicable: NotApplicable | None = None
    package: str | None = None
    cwd: str | None = None
    host_dirs: tuple[str, ...] = ()
    transport: str | None = None
    host_files: tuple[tuple[str, str], ...] = ()
    # issue #16: the package resolved once (``harness.probe.resolve``); launches start from it
    resolved: Resolved | None = field(default=None, compare=False)
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def launch(self) -> str:
        """The launch command, or the URL for a remote entry (what the record calls launchCommand)."""
        return self.command if self.command is not None else str(self.url)
