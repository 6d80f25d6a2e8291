"""A local stand-in for the part of the GitHub API the pull-request comment uses, on 127.0.0.1:
issue comments (list with pagination, create, update), one pull request, and GraphQL
``minimizeComment``. Every request is kept (method, path, whether it carried a token) so a test
can assert what was and was not called. GitHub itself is unreachable from here."""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

BOT = {"login": "github-actions[bot]", "type": "Bot"}
PERSON = {"login": "octocat", "type": "User"}


@dataclass
class FakeGitHub:
    repo: str = "octo/example-server"
    pulls: dict[int, dict] = field(default_factory=dict)
    comments: list[dict] = field(default_factory=list)
    minimized: set[str] = field(default_factory=set)
    requests: list[tuple[str, str, str]] = field(default_factory=list)  # method, path, Authorization
    url: str = ""

    def add_comment(self, number: int, body: str, user: dict = BOT) -> dict:
        index = len(self.comments) + 1
        comment = {"id": 1000 + index, "node_id": f"IC_node{index}", "body": body, "user": dict(user),
                   "issue": number, "created_at": f"2026-12-01T10:{index:02d}:00Z",
                   "html_url": f"https://github.example/{self.repo}/pull/{number}#issuecomment-{1000 + index}"}
        self.comments.append(comment)
        return comment

    def on(self, number: int) -> list[dict]:
        return [c for c in self.comments if c["issue"] == number]


def serve(fake: FakeGitHub):
    """Start the server for ``fake``; returns the ``ThreadingHTTPServer`` (call ``shutdown()``)."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # quiet
            pass

        def _reply(self, status: int, value: object) -> None:
            data = json.dumps(value).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _body(self) -> dict:
            return json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")

        def _handle(self, method: str) -> None:
            fake.requests.append((method, self.path, self.headers.get("Authorization") or ""))
            if not (self.headers.get("Authorization") or "").startswith("Bearer "):
                return self._reply(401, {"message": "Requires authentication"})
            repo = re.escape(fake.repo)
            if m := re.fullmatch(rf"/repos/{repo}/issues/(\d+)/comments\?per_page=(\d+)&page=(\d+)", self.path):
                number, per, page = (int(g) for g in m.groups())
                if method == "GET":
                    listed = [{k: v for k, v in c.items() if k != "issue"} for c in fake.on(number)]
                    return self._reply(200, listed[(page - 1) * per: page * per])
            if (m := re.fullmatch(rf"/repos/{repo}/issues/(\d+)/comments", self.path)) and method == "POST":
                return self._reply(201, fake.add_comment(int(m.group(1)), self._body()["body"]))
            if (m := re.fullmatch(rf"/repos/{repo}/issues/comments/(\d+)", self.path)) and method == "PATCH":
                for comment in fake.comments:
                    if comment["id"] == int(m.group(1)):
                        comment["body"] = self._body()["body"]
                        return self._reply(200, comment)
                return self._reply(404, {"message": "Not Found"})
            if (m := re.fullmatch(rf"/repos/{repo}/pulls/(\d+)", self.path)) and method == "GET":
                pull = fake.pulls.get(int(m.group(1)))
                return self._reply(200, pull) if pull else self._reply(404, {"message": "Not Found"})
            if self.path == "/graphql" and method == "POST":
                node = self._body()["variables"]["id"]
                fake.minimized.add(node)
                return self._reply(200, {"data": {"minimizeComment": {"minimizedComment": {"isMinimized": True}}}})
            return self._reply(404, {"message": "Not Found"})

        def do_GET(self):
            self._handle("GET")

        def do_POST(self):
            self._handle("POST")

        def do_PATCH(self):
            self._handle("PATCH")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    fake.url = f"http://127.0.0.1:{server.server_port}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def pull_request(number: int, base_sha: str, head_sha: str, repo: str, head_repo: str | None = None) -> dict:
    """A ``pull_request`` object as in the event payload and ``GET /pulls/N``."""
    return {"number": number, "title": "x", "base": {"sha": base_sha, "repo": {"full_name": repo}},
            "head": {"sha": head_sha, "repo": {"full_name": head_repo or repo}}}
