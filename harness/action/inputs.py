"""The Action's inputs, read from ``INPUT_*`` (either spelling), bounded and checked; every problem raised at once.

Public: ``read``, ``Inputs``, ``InputError``. Rule: docs/ACTION.md, "Inputs".
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from harness.action import paths
from harness.audit.gates import Increase
from harness.audit.published_reader import MAX_BYTES as PUBLISHED_BYTES
from harness.audit.readers import MAX_CONFIG_BYTES
from harness.probe import envnames
from harness.util.bounded import MAX_RECORD_BYTES
from harness.util import names as slugs
from harness.util import published, urls
from harness.util.untrusted import escape

NAMES = ("command", "url", "name", "env", "timeout", "budget", "baseline", "max-increase",
         "badge-path", "working-directory", "config", "changed", "suggest", "index", "tool-shape",
         "base", "build", "fail-on-increase", "comment", "github-token", "comment-from")
OUTPUT_DIR = published.AD_HOC_DIR
MAX_INPUT_CHARS = 8192
MAX_NUMBER_CHARS = 32
MAX_BUDGET_DIGITS = 15  # 10^15 tokens; history.csv cells are bounded the same way
MULTILINE = ("command", "env", "config", "build")  # a YAML block may span lines: a command (shlex), a list
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
_CONTROL_BUT_LINES = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
DEFAULT_TIMEOUT_SECONDS = 60.0
MAX_TIMEOUT_SECONDS = 600.0


class InputError(ValueError):
    """Inputs that cannot be used; ``problems`` holds one sentence per problem."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


@dataclass(frozen=True)
class Inputs:
    """Checked inputs: paths absolute, ``budget`` in tokens, ``None`` where unset."""

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
    config: tuple[Path, ...] = ()  # client config files to audit instead of one server
    changed: str | None = None  # with config: capture index for audit --changed ('' = the default source)
    suggest: str | None = None  # with config: tool-shape baseline for audit --suggest ('' = the default)
    fail_on_increase: Increase | None = None  # against the base commit's (or the baseline's) record
    comment: bool = False
    base: str = "auto"  # "auto", "none", or a commit to compare with
    build: str = ""  # bash -e script run before measuring the head and the base
    github_token: str = field(default="", repr=False)  # posts the comment; never handed to the server
    comment_from: Path | None = None  # a comment artifact to validate and post instead of measuring

    @property
    def results_dir(self) -> Path:
        """Where the record goes: ``<results_dir>/<name>/measurement.json``."""
        return self.working_directory / OUTPUT_DIR / published.RESULTS


def raw(environ: Mapping[str, str], name: str) -> str:
    """The stripped value of input ``name`` ('' when unset), under either spelling."""
    upper = name.replace(" ", "_").upper()
    for key in (f"INPUT_{upper}", f"INPUT_{upper.replace('-', '_')}"):
        value = environ.get(key)
        if value is not None and value.strip():
            return value.strip()
    return ""


def bounded(environ: Mapping[str, str], problems: list[str]) -> dict[str, str]:
    """Every input's stripped value; '' and a problem for one too long or holding a control character."""
    values = {}
    for name in NAMES:
        value = raw(environ, name)
        allowed = _CONTROL_BUT_LINES if name in MULTILINE else _CONTROL
        if len(value) > MAX_INPUT_CHARS:
            problems.append(f"input '{name}' is longer than {MAX_INPUT_CHARS} characters ({len(value)})")
            value = ""
        elif (bad := allowed.search(value)) is not None:
            problems.append(f"input '{name}' holds the character U+{ord(bad.group(0)):04X} (a control character or "
                            "invalid Unicode), which is not allowed")
            value = ""
        values[name] = value
    return values


def read(environ: Mapping[str, str]) -> Inputs:
    """Read and check every input. Raises :class:`InputError` listing all problems."""
    problems: list[str] = []
    given = bounded(environ, problems)
    workspace = Path(environ.get("GITHUB_WORKSPACE") or os.getcwd()).resolve()
    command, url = given["command"] or None, given["url"] or None
    config = split_names(given["config"])
    cleared = {n for n in NAMES if raw(environ, n) and not given[n]}  # over a bound: already a problem
    if config and (command or url):
        problems.append("give either 'config' (audit client configs) or one of 'command' and 'url', not both")
    elif bool(command) == bool(url) and not config and not given["comment-from"] \
            and not {"command", "url", "config", "comment-from"} & cleared:
        problems.append("give exactly one of the inputs 'command' and 'url'")
    if url and not re.match(r"^https?://", url):
        problems.append(f"input 'url' must be an http(s) URL, got {escape(repr(urls.shown(url)))}")
    name = given["name"] or default_name(environ)
    if not slugs.is_result_name(name):
        problems.append(f"input 'name' must be {slugs.RESULT_RULE}, got {escape(repr(_clip(name)))}")
    env = split_names(given["env"])
    bad = [f"{escape(repr(_clip(n)))} {envnames.problem(n)}" for n in env if envnames.problem(n)]
    if bad:
        problems.append(f"input 'env' holds names that cannot be passed: {'; '.join(bad)}")
    timeout = _number(given["timeout"], "timeout", problems, DEFAULT_TIMEOUT_SECONDS)
    if timeout is not None and not 1 <= timeout <= MAX_TIMEOUT_SECONDS:
        problems.append(f"input 'timeout' must be between 1 and {MAX_TIMEOUT_SECONDS:g} seconds, got {timeout:g}")
    budget = _budget(given["budget"], problems)
    max_increase = _increase(given["max-increase"], problems, "max-increase")
    fail_on_increase = _increase(given["fail-on-increase"], problems, "fail-on-increase")
    comment = _boolean(given["comment"], "comment", problems)
    workdir = _working_directory(workspace, given["working-directory"], problems)
    if max_increase is not None and not given["baseline"]:
        problems.append("input 'max-increase' needs a 'baseline' to compare against")
    located = _located(workspace, workdir, given, name, bool(config), problems)
    base = given["base"] or "auto"
    if not re.fullmatch(r"auto|none|[0-9a-f]{7,64}|[A-Za-z0-9_][A-Za-z0-9_./-]{0,200}", base) or ".." in base:
        problems.append(f"input 'base' must be auto, none or a commit, got {escape(repr(_clip(base)))}")
    comment_from = None
    if given["comment-from"] and (mixed := [n for n in ("command", "url", "config", "build") if given[n]]):
        problems.append(f"input 'comment-from' posts another run's measurement and measures nothing: give it "
                        f"without {', '.join(repr(n) for n in mixed)}")
    if given["comment-from"]:
        comment_from = paths.inside(workspace, workdir, given["comment-from"], "comment-from", problems)
        if comment_from is not None and not _is_dir(comment_from):
            problems.append(f"input 'comment-from' is not a directory: {escape(repr(_clip(given['comment-from'])))}")
    changed, suggest = (_published(given, flag, source, located.get(source), bool(config), problems)
                        for flag, source in (("changed", "index"), ("suggest", "tool-shape")))
    if problems:
        raise InputError(problems)
    assert timeout is not None  # a missing or bad timeout added a problem above
    return Inputs(
        name=name, command=command, url=url, env=env, timeout_seconds=float(timeout), budget=budget,
        baseline=located.get("baseline"), max_increase=max_increase,
        badge_path=located["badge-path"], workspace=workspace, working_directory=workdir,
        config=tuple(located[f"config:{c}"] for c in config),  # a refused one added a problem
        changed=changed, suggest=suggest,
        fail_on_increase=fail_on_increase, comment=comment, base=base, build=given["build"],
        github_token=given["github-token"], comment_from=comment_from,
    )


def _working_directory(workspace: Path, value: str, problems: list[str]) -> Path:
    """The working directory, resolved inside the workspace (the workspace when unset or refused)."""
    workdir = paths.inside(workspace, workspace, value, "working-directory", problems) if value else workspace
    if workdir is None:
        return workspace
    if not _is_dir(workdir):
        problems.append(f"input 'working-directory' is not a directory: {escape(repr(_clip(value)))}")
    return workdir


def _located(workspace: Path, workdir: Path, given: Mapping[str, str], name: str, audit: bool,
             problems: list[str]) -> dict[str, Path]:
    """Every path input resolved inside the workspace and checked for its use, keyed by input name."""
    located: dict[str, Path] = {}
    reads = [("baseline", given["baseline"], MAX_RECORD_BYTES)]
    reads += [(f"config:{c}", c, MAX_CONFIG_BYTES) for c in split_names(given["config"])]
    reads += [(source, given[source], PUBLISHED_BYTES) for source in ("index", "tool-shape")
              if audit and not re.match(r"^https?://", given[source])]
    for key, value, limit in reads:
        label = key.split(":", 1)[0]
        path = paths.inside(workspace, workdir, value, label, problems) if value else None
        if path is not None and (label == "baseline" and not path.exists()  # the gate says so, after measuring
                                 or paths.readable(path, value, label, limit, problems)):
            located[key] = path
    paths.no_links(workdir, OUTPUT_DIR, problems)
    badge = given["badge-path"] or f"{OUTPUT_DIR}/{published.badge(name)}"
    badge_path = paths.inside(workspace, workdir, badge, "badge-path", problems)
    if badge_path is not None and ".git" in badge_path.relative_to(workspace).parts:  # git reads what is there
        problems.append(f"input 'badge-path' is inside a .git folder: {escape(repr(_clip(badge)))}")
    elif badge_path is not None and paths.writable(badge_path, badge, "badge-path", problems):
        located["badge-path"] = badge_path
    else:
        located["badge-path"] = workdir / OUTPUT_DIR / published.badge(name)
    return located


def _published(given: Mapping[str, str], flag: str, source_name: str, located: Path | None, audit: bool,
               problems: list[str]) -> str | None:
    """The ``changed``/``suggest`` source for ``config`` audits: ``None`` off, ``''`` the default, else a URL or path."""
    on, source = _boolean(given[flag], flag, problems), given[source_name]
    if not (on or source):
        return None
    if not audit:
        problems.append(f"inputs '{flag}' and '{source_name}' apply to a 'config' audit only")
        return None
    if not source or re.match(r"^https?://", source):
        return source
    return str(located) if located is not None else None  # refused: its problem is already listed


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


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except (OSError, ValueError):  # ENAMETOOLONG, a NUL byte
        return False


def _number(text: str, label: str, problems: list[str], default: float) -> float | None:
    if not text:
        return default
    try:
        value = float(text) if len(text) <= MAX_NUMBER_CHARS else math.nan
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        problems.append(f"input '{label}' must be a number of at most {MAX_NUMBER_CHARS} characters, "
                        f"got {escape(repr(_clip(text)))}")
        return None
    return value


def _budget(text: str, problems: list[str]) -> int | None:
    if not text:
        return None
    cleaned = text.replace(",", "").replace("_", "")
    if not re.fullmatch(f"[0-9]{{1,{MAX_BUDGET_DIGITS}}}", cleaned, flags=re.ASCII):
        problems.append(f"input 'budget' must be a whole number of tokens of at most {MAX_BUDGET_DIGITS} digits, "
                        f"got {escape(repr(_clip(text)))}")
        return None
    return int(cleaned)


def _increase(text: str, problems: list[str], label: str) -> Increase | None:
    if not text:
        return None
    match = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?) *(%?)", text.replace(",", ""), flags=re.ASCII)
    if not match or len(match.group(1)) > MAX_NUMBER_CHARS:
        problems.append(f"input '{label}' must be tokens (e.g. 500) or a percentage (e.g. 10%), "
                        f"got {escape(repr(_clip(text)))}")
        return None
    return Increase(float(match.group(1)), bool(match.group(2)))
