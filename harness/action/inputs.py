"""The Action's inputs, read from ``INPUT_*`` environment variables and checked.

How inputs arrive: for a container action the runner sets ``INPUT_<NAME>`` with the input id
upper-cased and spaces turned into ``_`` — a hyphen is kept, so ``max-increase`` arrives as
``INPUT_MAX-INCREASE`` (a name a POSIX shell cannot read, but ``os.environ`` can). The composite
host variant maps its inputs into the environment itself and uses underscores
(``INPUT_MAX_INCREASE``). Both spellings are accepted here; inputs never pass through a shell.

Paths: ``working-directory`` is relative to ``GITHUB_WORKSPACE`` (default: the workspace);
``baseline`` and ``badge-path`` are relative to the working directory.

Every problem is collected and raised at once as :class:`InputError` (one line per problem).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

NAMES = ("command", "url", "name", "env", "timeout", "budget", "baseline", "max-increase",
         "badge-path", "working-directory", "config", "changed", "suggest", "index", "tool-shape")
SLUG = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
OUTPUT_DIR = ".mcp-context-cost"
DEFAULT_TIMEOUT_SECONDS = 60.0
MAX_TIMEOUT_SECONDS = 600.0


class InputError(ValueError):
    """Inputs that cannot be used; ``problems`` holds one sentence per problem."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


@dataclass(frozen=True)
class Increase:
    """An allowed increase over the baseline: ``amount`` tokens, or ``amount`` percent of the
    baseline's totalTokens when ``percent`` is true."""

    amount: float
    percent: bool

    def allowed(self, baseline_tokens: int) -> float:
        """The largest allowed increase in tokens over ``baseline_tokens``."""
        return baseline_tokens * self.amount / 100.0 if self.percent else self.amount

    def __str__(self) -> str:
        text = f"{self.amount:g}"
        return f"{text}%" if self.percent else f"{text} tokens"


@dataclass(frozen=True)
class Inputs:
    """Checked inputs. Paths are absolute. ``budget`` is in tokens, ``timeout_seconds`` the first
    attempt's budget in seconds; ``baseline``/``max_increase``/``budget`` are ``None`` when unset."""

    name: str
    command: str | None
    url: str | None
    env: tuple[str, ...]
    timeout_seconds: float
    budget: int | None
    baseline: Path | None
    max_increase: Increase | None
    badge_path: Path
    workspace: Path
    working_directory: Path
    config: tuple[Path, ...] = ()  # client config files to audit instead of one server (issue #12)
    changed: str | None = None  # with config: capture index for audit --changed ('' = the default source)
    suggest: str | None = None  # with config: tool-shape baseline for audit --suggest ('' = the default)

    @property
    def results_dir(self) -> Path:
        """Where the record goes: ``<results_dir>/<name>/measurement.json``."""
        return self.working_directory / OUTPUT_DIR / "results"


def raw(environ: Mapping[str, str], name: str) -> str:
    """The stripped value of input ``name`` ('' when unset), under either spelling."""
    upper = name.replace(" ", "_").upper()
    for key in (f"INPUT_{upper}", f"INPUT_{upper.replace('-', '_')}"):
        value = environ.get(key)
        if value is not None and value.strip():
            return value.strip()
    return ""


def read(environ: Mapping[str, str]) -> Inputs:
    """Read and check every input. Raises :class:`InputError` listing all problems."""
    problems: list[str] = []
    workspace = Path(environ.get("GITHUB_WORKSPACE") or os.getcwd()).resolve()
    command, url = raw(environ, "command") or None, raw(environ, "url") or None
    config = split_names(raw(environ, "config"))
    if config and (command or url):
        problems.append("give either 'config' (audit client configs) or one of 'command' and 'url', not both")
    elif bool(command) == bool(url) and not config:
        problems.append("give exactly one of the inputs 'command' and 'url'")
    if url and not re.match(r"^https?://", url):
        problems.append(f"input 'url' must be an http(s) URL, got {url!r}")
    name = raw(environ, "name") or default_name(environ)
    if not SLUG.match(name):
        problems.append("input 'name' must be a slug of a-z, 0-9, '.', '_', '-' (starting with a letter or "
                        f"digit), got {name!r}")
    env = split_names(raw(environ, "env"))
    bad = [n for n in env if not ENV_NAME.match(n)]
    if bad:
        problems.append(f"input 'env' holds names that are not environment variable names: {', '.join(map(repr, bad))}")
    timeout = _number(raw(environ, "timeout"), "timeout", problems, DEFAULT_TIMEOUT_SECONDS)
    if timeout is not None and not 1 <= timeout <= MAX_TIMEOUT_SECONDS:
        problems.append(f"input 'timeout' must be between 1 and {MAX_TIMEOUT_SECONDS:g} seconds, got {timeout:g}")
    budget = _budget(raw(environ, "budget"), problems)
    max_increase = _increase(raw(environ, "max-increase"), problems)
    workdir = workspace / raw(environ, "working-directory") if raw(environ, "working-directory") else workspace
    if not workdir.is_dir():
        problems.append(f"input 'working-directory' is not a directory: {workdir}")
    baseline_text = raw(environ, "baseline")
    if max_increase is not None and not baseline_text:
        problems.append("input 'max-increase' needs a 'baseline' to compare against")
    badge_text = raw(environ, "badge-path")
    changed, suggest = (_published(environ, flag, source, workdir, bool(config), problems)
                        for flag, source in (("changed", "index"), ("suggest", "tool-shape")))
    if problems:
        raise InputError(problems)
    return Inputs(
        name=name, command=command, url=url, env=env, timeout_seconds=float(timeout), budget=budget,
        baseline=(workdir / baseline_text) if baseline_text else None, max_increase=max_increase,
        badge_path=workdir / (badge_text or f"{OUTPUT_DIR}/badges/{name}.json"),
        workspace=workspace, working_directory=workdir.resolve(), config=tuple(workdir.resolve() / c for c in config),
        changed=changed, suggest=suggest,
    )


def _published(environ: Mapping[str, str], flag: str, source_name: str, workdir: Path, audit: bool,
               problems: list[str]) -> str | None:
    """The ``changed``/``suggest`` switch and its source (issue #13), for ``config`` audits only:
    ``None`` when off, ``''`` for the default source (the Action's own checkout, else the published
    raw URL), else a URL or a path made absolute against the working directory."""
    on, source = _boolean(raw(environ, flag), flag, problems), raw(environ, source_name)
    if not (on or source):
        return None
    if not audit:
        problems.append(f"inputs '{flag}' and '{source_name}' apply to a 'config' audit only")
        return None
    return source if not source or re.match(r"^https?://", source) else str(workdir / source)


def _boolean(text: str, label: str, problems: list[str]) -> bool:
    if text.lower() not in ("", "true", "false"):
        problems.append(f"input '{label}' must be true or false, got {text!r}")
    return text.lower() == "true"


def split_names(text: str) -> tuple[str, ...]:
    """Names from a newline- or comma-separated list, blanks dropped, duplicates kept once."""
    names = [part.strip() for part in re.split(r"[,\n]", text)]
    return tuple(dict.fromkeys(n for n in names if n))


def default_name(environ: Mapping[str, str]) -> str:
    """A slug from the repository name (``owner/My_Repo`` → ``my_repo``), else ``server``."""
    repo = environ.get("GITHUB_REPOSITORY", "").rsplit("/", 1)[-1].lower()
    slug = re.sub(r"[^a-z0-9._-]+", "-", repo).strip("-._")
    return slug or "server"


def _number(text: str, label: str, problems: list[str], default: float) -> float | None:
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        problems.append(f"input '{label}' must be a number, got {text!r}")
        return None
    return value


def _budget(text: str, problems: list[str]) -> int | None:
    if not text:
        return None
    cleaned = text.replace(",", "").replace("_", "")
    if not re.fullmatch(r"[0-9]+", cleaned):
        problems.append(f"input 'budget' must be a whole number of tokens, got {text!r}")
        return None
    return int(cleaned)


def _increase(text: str, problems: list[str]) -> Increase | None:
    if not text:
        return None
    match = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?) *(%?)", text.replace(",", ""))
    if not match:
        problems.append(f"input 'max-increase' must be tokens (e.g. 500) or a percentage (e.g. 10%), got {text!r}")
        return None
    return Increase(float(match.group(1)), bool(match.group(2)))
