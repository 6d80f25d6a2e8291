"""The workflow run's event (``GITHUB_EVENT_PATH``), read bounded; only numbers, SHAs and repository names are taken.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness.util import bounded

MAX_EVENT_BYTES = 16 * 1024 * 1024
PULL_REQUEST_EVENTS = ("pull_request", "pull_request_target")
_SHA = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")
_REPO = re.compile(r"^(?!\.\.?/)[A-Za-z0-9_.-]{1,100}/(?!\.\.?$)[A-Za-z0-9_.-]{1,100}$")  # never . or ..


class EventError(ValueError):
    """The event file cannot be read or lacks a field the Action needs."""


@dataclass(frozen=True)
class PullRequest:
    """A pull request: number, base and head SHAs, its repository and the head's."""

    number: int
    base_sha: str
    head_sha: str
    repository: str
    head_repository: str

    @property
    def from_fork(self) -> bool:
        return self.head_repository.lower() != self.repository.lower()


def load(environ: Mapping[str, str]) -> dict:
    """The parsed event (``{}`` when ``GITHUB_EVENT_PATH`` is unset). Raises :class:`EventError`."""
    path = environ.get("GITHUB_EVENT_PATH")
    if not path:
        return {}
    try:
        event = json.loads(bounded.read_regular(path, MAX_EVENT_BYTES).decode("utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise EventError(f"the event file (GITHUB_EVENT_PATH) cannot be read: {exc}") from None
    if not isinstance(event, dict):
        raise EventError("the event file (GITHUB_EVENT_PATH) is not a JSON object")
    return event


def pull_request(environ: Mapping[str, str]) -> PullRequest | None:
    """The pull request of a ``pull_request``/``pull_request_target`` run, else ``None``."""
    if environ.get("GITHUB_EVENT_NAME") not in PULL_REQUEST_EVENTS:
        return None
    return pull_request_from(load(environ).get("pull_request"))


def pull_request_from(value: Any) -> PullRequest:
    """A :class:`PullRequest` from an API or event ``pull_request`` object. Raises :class:`EventError`."""
    try:
        base, head = value["base"], value["head"]
        head_repo = head["repo"] if isinstance(head.get("repo"), dict) else {}  # null: a deleted fork
        found = PullRequest(number=value["number"], base_sha=base["sha"], head_sha=head["sha"],
                            repository=base["repo"]["full_name"], head_repository=head_repo.get("full_name") or "")
    except (KeyError, TypeError, AttributeError) as exc:
        raise EventError(f"the pull request in the event lacks a field ({exc})") from None
    if not (isinstance(found.number, int) and not isinstance(found.number, bool) and found.number > 0):
        raise EventError("the pull request number is not a positive integer")
    for sha in (found.base_sha, found.head_sha):
        if not (isinstance(sha, str) and _SHA.match(sha)):
            raise EventError("a pull request commit is not a SHA")
    if not (isinstance(found.repository, str) and _REPO.match(found.repository)):
        raise EventError("the pull request's repository is not owner/name")
    if not isinstance(found.head_repository, str) or not _REPO.match(found.head_repository):
        found = PullRequest(found.number, found.base_sha, found.head_sha, found.repository, "(deleted)")
    return found


def is_sha(text: str) -> bool:
    return bool(_SHA.match(text))


def is_repository(text: str) -> bool:
    return bool(_REPO.match(text))
