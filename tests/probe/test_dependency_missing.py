"""An npm install whose registry served the server's own package but has no package, or no matching
version, for one of its dependencies (a filtered mirror answers 404 for what the public registry holds)
is the registry's — ``not-measured-here`` with ``environmentCause`` ``registry`` — while a 404 or
``notarget`` for the server's own package or version stays the server's ``startup-failure``. Real npm
installs from a small local registry that answers 404 for what it does not hold."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from harness.probe import machine_fault
from harness.probe import status as st
from harness.probe.outcome import Capture, Failure
from harness.probe.target import Target
from tests.probe.helpers import measure_and_write, results_root  # noqa: F401


def tarball(name: str, dependencies: dict[str, str], scripts: dict[str, str] | None = None,
            files: dict[str, bytes] | None = None) -> bytes:
    """An npm tarball of ``name``@1.0.0 whose bin exits 1, with ``scripts`` and extra ``files`` in it."""
    pkg = {"name": name, "version": "1.0.0", "bin": {name: "index.js"}, "dependencies": dependencies,
           **({"scripts": scripts} if scripts else {})}
    files = {"package/package.json": json.dumps(pkg).encode(),
             "package/index.js": b"#!/usr/bin/env node\nprocess.exit(1)\n",
             **{f"package/{path}": data for path, data in (files or {}).items()}}
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for path, data in files.items():
            info = tarfile.TarInfo(path)
            info.size, info.mode = len(data), 0o755
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


class Registry:
    """Packages by name: ``{name: dependencies}``, each with the one version 1.0.0; 404 for any other."""

    def __init__(self, packages: dict[str, dict[str, str]]):
        self.tarballs = {name: tarball(name, deps) for name, deps in packages.items()}
        self.packages = packages
        registry = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                path = self.path.split("?", 1)[0].lstrip("/").replace("%2f", "/").replace("%2F", "/")
                name, _, tail = path.partition("/-/")
                if name in registry.tarballs and tail:
                    body = registry.tarballs[name]
                elif name in registry.tarballs and not tail:
                    body = json.dumps(registry.packument(name)).encode()
                else:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def packument(self, name: str) -> dict:
        tarball = self.tarballs[name]
        version = {"name": name, "version": "1.0.0", "bin": {name: "index.js"}, "dependencies": self.packages[name],
                   "dist": {"tarball": f"{self.url}{name}/-/{name.rpartition('/')[2]}-1.0.0.tgz",
                            "shasum": hashlib.sha1(tarball).hexdigest()}}
        return {"name": name, "dist-tags": {"latest": "1.0.0"}, "versions": {"1.0.0": version}}


@pytest.fixture
def registry(monkeypatch, tmp_path):
    reg = Registry({"own-mcp": {"helper-gone": "^1.0.0"}, "@acme/pinned-mcp": {"helper-old": "^2.0.0"},
                    "helper-old": {}, "fine-mcp": {"helper-old": "^1.0.0"}})
    monkeypatch.setenv("npm_config_registry", reg.url)
    monkeypatch.setenv("MCP_CONTEXT_COST_CACHE", str(tmp_path / "cache"))
    yield reg
    reg.server.shutdown()


@pytest.mark.slow
@pytest.mark.parametrize("spec, status, said", [
    ("own-mcp@1.0.0", st.NOT_MEASURED_HERE, "the registry has no helper-gone (a dependency of own-mcp"),
    ("@acme/pinned-mcp@1.0.0", st.NOT_MEASURED_HERE, "the registry has no helper-old (a dependency of @acme/pinned-mcp"),
    ("no-such-mcp@1.0.0", st.STARTUP_FAILURE, "404"),  # the package itself: the server's
    ("own-mcp@9.9.9", st.STARTUP_FAILURE, "notarget"),  # its own version: the server's
])
def test_a_dependency_the_registry_lacks_is_the_registry_s(registry, results_root, spec, status, said):  # noqa: F811
    run = measure_and_write(Target(name="dep", command=f"npx -y {spec}", timeout_seconds=30), results_root,
                            isolation="host")
    rec = run.record
    assert rec["status"] == status and rec["phase"] == "install", run.notes
    assert (rec.get("environmentCause") == machine_fault.REGISTRY) == (status == st.NOT_MEASURED_HERE)
    assert said in run.notes


def _install(tail: str, command: str = "npx -y @acme/mcp@1.0.0") -> st.Verdict:
    capture = Capture("1.0.0", phase="install", stderr_tail=tail, exit_code=1,
                      failure=Failure("exited", "install", "the install failed before any launch", exit_code=1))
    return st.classify(Target(name="x", command=command), capture)


@pytest.mark.parametrize("tail, status", [
    ("npm error code E404\nnpm error 404 Not Found - GET https://registry.npmjs.org/@acme%2fhelper - Not found\n"
     "npm error 404\nnpm error 404  '@acme/helper@^1.2.0' is not in this registry.\n", st.NOT_MEASURED_HERE),
    ("npm error code ETARGET\nnpm error notarget No matching version found for zod@^9.0.0.\n", st.NOT_MEASURED_HERE),
    ("npm error 404 Not Found - GET https://registry.npmjs.org/left-pad/-/left-pad-1.0.0.tgz\n", st.NOT_MEASURED_HERE),
    ("npm's log: npm error 404 Not Found - GET https://registry.npmjs.org/helper\n", st.NOT_MEASURED_HERE),
    # the server's own package or version
    ("npm error code E404\nnpm error 404 Not Found - GET https://registry.npmjs.org/@acme%2fmcp\n"
     "npm error 404  The requested resource '@acme/mcp@1.0.0' could not be found\n", st.STARTUP_FAILURE),
    ("npm error code ETARGET\nnpm error notarget No matching version found for @acme/mcp@1.0.0.\n", st.STARTUP_FAILURE),
    # a 404 from a host no install reaches (a server's own API in a script's words), and one printed after a
    # package's own install script started (npm had fetched everything by then)
    ("npm error 404 Not Found - GET https://api.example.com/helper\n", st.STARTUP_FAILURE),
    ("> @acme/mcp@1.0.0 postinstall\nnpm error 404 Not Found - GET https://registry.npmjs.org/helper\n",
     st.STARTUP_FAILURE),
])
def test_whose_404_it_is(tail, status):
    verdict = _install(tail)
    assert verdict.status == status, verdict
    assert (verdict.cause == machine_fault.REGISTRY) == (status == st.NOT_MEASURED_HERE)


def test_without_a_package_to_compare_it_stays_the_server_s():
    tail = "npm error 404 Not Found - GET https://registry.npmjs.org/helper\n"
    assert _install(tail, command="node server.js").status == st.STARTUP_FAILURE
