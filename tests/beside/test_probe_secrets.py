"""Issue #9 kind 1 beside the headline: the capability probe compares two captures of each
server and publishes the tools gained. It read the captures as the server sent them, so a value
the sweep hands a server (the proxy credentials npx needs) echoed into a tool that appears only
when the client declares capabilities reached ``results/capability-probe.json``, the pages and
the command's output. Both captures are redacted before they are compared, as a record's is
before it is counted."""

from __future__ import annotations

import contextlib
import io
from types import SimpleNamespace

from harness.cli import capability_probe_cmd
from harness.core.jsparse import parse
from harness.probe import build_record as record
from harness.probe.measure import measure_sync
from harness.probe.redact import MASK
from harness.probe.target import Target
from tests.conftest import fixture_command
from tests.hostile import PASSWORD, assert_secret_absent
from tests.pages import builders as b

PROXY = f"http://proxyuser:{PASSWORD}@127.0.0.1:9"


def test_the_capability_probe_publishes_no_secret(tmp_path, monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", PROXY)
    monkeypatch.setenv("npm_config_https_proxy", PROXY)
    root = tmp_path / "repo"
    root.mkdir()
    command = fixture_command("leaks_when_declared", "--leak", "HTTP_PROXY", "--leak", "npm_config_https_proxy")
    b.write_catalog(root, [{"name": "leaky", "command": command}])
    record.write(record.build(measure_sync(Target(name="leaky", command=command), isolation="host", dual=False)),
                 root / "results")
    args = SimpleNamespace(root=root, catalog="servers.yaml", only=None, top=None, isolation="host",
                           concurrency=1, no_regen=False)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
        assert capability_probe_cmd.run(args) == 0
    doc = parse((root / "results/capability-probe.json").read_text())
    gained = [t["name"] for t in doc["rows"][0]["gained"]]
    assert gained == [f"leak_0 http://{MASK}@127.0.0.1:9", f"leak_1 http://{MASK}@127.0.0.1:9"]
    assert_secret_absent(PASSWORD, texts=(printed.getvalue(),), roots=(root,))
