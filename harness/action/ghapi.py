"""The GitHub API calls the pull-request comment needs, bounded in time and size; ``keep_current`` updates ours.

Rule: docs/ACTION.md, "Pull requests: the comparison and the comment".
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass

MARKER = "<!-- mcp-context-cost -->"
MAX_PAGES = 20
MAX_REPLY_BYTES = 8 * 1024 * 1024
TIMEOUT_SECONDS = 30  # per connect and per read
DEADLINE_SECONDS = 120  # per call, for a reply that trickles in


class ApiError(RuntimeError):
    """A GitHub API call failed; the message names the call and the status."""


@dataclass(frozen=True)
class Outcome:
    """What :func:`keep_current` did: ``created`` or ``updated``, the URL, and older comments collapsed or not."""

    action: str
    url: str
    minimized: int
    not_minimized: int = 0


class GitHub:
    """A client for one repository's issue comments, authenticated with ``token``."""

    def __init__(self, token: str, environ: Mapping[str, str]):
        import requests  # loaded only when a comment is posted

        self.api = (environ.get("GITHUB_API_URL") or "https://api.github.com").rstrip("/")
        self.graphql_url = environ.get("GITHUB_GRAPHQL_URL") or f"{self.api}/graphql"
        self.session = requests.Session()
        self.session.headers.update({"Authorization": f"Bearer {token}", "Accept": "application/vnd.github+json",
                                     "X-GitHub-Api-Version": "2022-11-28", "User-Agent": "mcp-context-cost"})

    def _call(self, method: str, url: str, payload: dict | None = None) -> object:
        import requests  # loaded only when a comment is posted

        path = url.removeprefix(self.api)
        ends = time.monotonic() + DEADLINE_SECONDS
        try:
            with self.session.request(method, url, json=payload, timeout=TIMEOUT_SECONDS, stream=True,
                                      allow_redirects=False) as reply:
                chunks, size = [], 0
                while chunk := reply.raw.read1(64 * 1024, decode_content=True):  # returns what came in
                    chunks.append(chunk)
                    size += len(chunk)
                    if size > MAX_REPLY_BYTES:
                        raise ApiError(f"{method} {path}: the reply is over {MAX_REPLY_BYTES:,} bytes")
                    if time.monotonic() > ends:
                        raise ApiError(f"{method} {path}: the reply took over {DEADLINE_SECONDS} s")
                if reply.status_code >= 300:  # a redirect included: never followed
                    raise ApiError(f"{method} {path}: HTTP {reply.status_code}")
                body = b"".join(chunks)
                return json.loads(body) if body else None
        except requests.RequestException as exc:
            raise ApiError(f"{method} {path}: {type(exc).__name__}") from None
        except (ValueError, RecursionError):
            raise ApiError(f"{method} {path}: the reply is not JSON (or nested too deep)") from None

    def pull(self, repo: str, number: int) -> dict:
        reply = self._call("GET", f"{self.api}/repos/{repo}/pulls/{number}")
        if not isinstance(reply, dict):
            raise ApiError(f"GET /repos/{repo}/pulls/{number}: not an object")
        return reply

    def comments(self, repo: str, number: int) -> list[dict]:
        found: list[dict] = []
        for page in range(1, MAX_PAGES + 1):
            reply = self._call("GET", f"{self.api}/repos/{repo}/issues/{number}/comments?per_page=100&page={page}")
            if not isinstance(reply, list):
                raise ApiError(f"GET /repos/{repo}/issues/{number}/comments: not a list")
            found += [c for c in reply if isinstance(c, dict)]
            if len(reply) < 100:
                break
        return found

    def create(self, repo: str, number: int, body: str) -> object:
        return self._call("POST", f"{self.api}/repos/{repo}/issues/{number}/comments", {"body": body})

    def update(self, repo: str, comment_id: int, body: str) -> object:
        return self._call("PATCH", f"{self.api}/repos/{repo}/issues/comments/{comment_id}", {"body": body})

    def minimize(self, node_id: str) -> None:
        query = ("mutation($id: ID!) { minimizeComment(input: {subjectId: $id, classifier: OUTDATED}) "
                 "{ minimizedComment { isMinimized } } }")
        reply = self._call("POST", self.graphql_url, {"query": query, "variables": {"id": node_id}})
        if not isinstance(reply, dict) or reply.get("errors"):
            raise ApiError("POST /graphql minimizeComment: the reply holds errors")


def ours(comment: dict) -> bool:
    """A comment this Action wrote: by a bot, starting with the marker, with the fields a comment has."""
    user = comment.get("user")
    user = user if isinstance(user, dict) else {}
    body, number = comment.get("body"), comment.get("id")
    return (user.get("type") == "Bot" and isinstance(body, str) and body.startswith(MARKER)
            and isinstance(number, int) and not isinstance(number, bool) and number > 0
            and isinstance(comment.get("node_id"), str) and isinstance(comment.get("created_at"), str))


def keep_current(github: GitHub, repo: str, number: int, body: str) -> Outcome:
    """Update our newest comment on pull request ``number`` (or create one), then minimize our older ones."""
    mine = sorted((c for c in github.comments(repo, number) if ours(c)), key=lambda c: (c["created_at"], c["id"]))
    if mine:
        newest = mine[-1]
        reply = github.update(repo, int(newest["id"]), body)
        action = "updated"
    else:
        reply = github.create(repo, number, body)
        action = "created"
    failed = 0
    for older in mine[:-1]:
        try:
            github.minimize(older["node_id"])
        except ApiError:
            failed += 1
    url = reply.get("html_url", "") if isinstance(reply, dict) else ""
    return Outcome(action, url if isinstance(url, str) else "", len(mine[:-1]) - failed, failed)
