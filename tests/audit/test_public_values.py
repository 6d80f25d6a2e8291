"""Values that are not secrets by their nature — a path, a flag — are not redacted out of the
harness's own output, and an unchanged config audited against its own baseline reports no change
(configs pair on their real paths). A secret beside them still appears nowhere, in any encoding.
"""

from __future__ import annotations

import base64
import json
import sys

import pytest

from harness.probe.redact import Secrets, public_value
from tests.audit.conftest import report_of, run_audit
from tests.conftest import FIXTURE_SERVERS

WELL = [sys.executable, str(FIXTURE_SERVERS / "well_behaved.py")]
SECRET = "sk-proj-" + "Q7x2Lm9Pz4Rt8Wv1Kc6Hn3Bj5Yd0Fs"


def _cursor(home, env: dict) -> None:
    (home / ".cursor").mkdir(parents=True, exist_ok=True)
    server = {"command": WELL[0], "args": WELL[1:], "env": env}
    (home / ".cursor" / "mcp.json").write_text(json.dumps({"mcpServers": {"memory": server}}))


@pytest.mark.slow
@pytest.mark.parametrize("env", [
    {"MEMORY_FILE_PATH": "HOME/.cursor/memory.json"},               # the case: beside the config
    {"MEMORY_FILE_PATH": "${userHome}/.cursor/memory.json"},        # the same through Cursor's variable
    {"MEMORY_FILE_PATH": "${env:HOME}/.cursor/memory.json"},        # ... and through the environment
    {"DATA_DIR": "HOME/.cursor", "LOG_LEVEL": "debug", "PORT": "8080", "API_KEY": SECRET},
    {"SSH_PRIVATE_KEY": "HOME/.cursor/id_ed25519", "API_KEY": SECRET},  # a secret-looking name: still a secret
])
def test_an_unchanged_config_against_its_own_baseline_reports_no_change(tmp_path, env):
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    _cursor(home, {k: v.replace("HOME", str(home)) if v.startswith("HOME") else v for k, v in env.items()})
    first = run_audit(["--single", "--json", str(tmp_path / "base.json")], project, home)
    assert first.returncode == 0, first.stderr
    base = report_of((tmp_path / "base.json").read_text())
    assert [c["path"] for c in base["configs"]] == ["~/.cursor/mcp.json"]
    again = run_audit(["--single", "--baseline", str(tmp_path / "base.json"), "--json"], project, home)
    report = report_of(again.stdout)
    gate = report["gates"][0]
    assert again.returncode == 0 and gate["passed"], gate
    assert gate["reasons"] == ["~/.cursor/mcp.json: 215 → 215 tokens (+0)"] or "(+0)" in gate["reasons"][0], gate
    text = run_audit(["--single"], project, home).stdout
    assert "~/.cursor/mcp.json" in text and "[redacted]cp.json" not in text
    outputs = first.stdout + first.stderr + (tmp_path / "base.json").read_text() + again.stdout + again.stderr + text
    for form in (SECRET, SECRET[:12], SECRET.encode().hex(), base64.b64encode(SECRET.encode()).decode()):
        assert form not in outputs


@pytest.mark.parametrize("name, value, public", [
    ("MEMORY_FILE_PATH", "/home/u/proj/.cursor/memory.json", True),
    ("WORKSPACE", "~/code/app", True),
    ("OUT", "C:\\Users\\u\\out", True),
    ("LOG_LEVEL", "debug", True),
    ("PORT", "8080", True),
    ("API_KEY", "/home/u/key.pem", False),          # the name says secret
    ("PATH_WITH_TOKEN", "/v1/" + SECRET, False),     # a credential of a known shape inside
    ("DATABASE_URL", "postgres://u:pw@h/db", False),  # a URL with userinfo is not a path
    ("UPSTREAM", "/proxy?token=abc123", False),      # a query is not a path
    ("ANYTHING", "correct horse battery", False),
    ("PIN", "12345678", False),                       # more digits than a port
    # a base64 key can begin with "/" (or sit after "~/", "./"): random text is not a path
    ("SIGNING_SALT", "/Zq8Lk3Xw9Pm2Rt7Vb4Nc6Hj1", False),
    ("DB_PASSPHRASE", "~/Zq8Lk3Xw9Pm2Rt7Vb4Nc6Hj1", False),
    ("HMAC", "/a9/Zq8Lk3Xw9Pm2+t7Vb4Nc6H", False),
    ("MASTER", "./Zq8Lk3Xw9Pm2Rt7Vb4Nc6Hj1", False),
    ("PROJECT_DIR", "/Users/Jane/Projects/app-2024/data_v2", True),
    ("CACHE", "/tmp/pytest-of-root/pytest-12/test_case0/cache", True),
])
def test_public_by_nature(name, value, public):
    assert public_value(name, value) is public
    assert (value in Secrets.handed(env={name: value}).values) is not public


@pytest.mark.slow
@pytest.mark.parametrize("value", ["/Zq8Lk3Xw9Pm2Rt7Vb4Nc6Hj1", "~/Zq8Lk3Xw9Pm2Rt7Vb4Nc6Hj1"])
def test_a_key_that_reads_like_a_path_is_still_a_secret(tmp_path, value):
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    leaker = [sys.executable, str(FIXTURE_SERVERS / "leaks_secrets.py"), "--leak", "SIGNING_SALT", "--where", "error"]
    (home / ".cursor").mkdir(parents=True)
    server = {"command": leaker[0], "args": leaker[1:], "env": {"SIGNING_SALT": value}}
    (home / ".cursor" / "mcp.json").write_text(json.dumps({"mcpServers": {"salty": server}}))
    done = run_audit(["--single", "--json", str(tmp_path / "r.json")], project, home)
    report = report_of((tmp_path / "r.json").read_text())
    assert report["configs"][0]["servers"][0]["status"] == "startup-failure", report["configs"][0]["servers"][0]
    outputs = done.stdout + done.stderr + (tmp_path / "r.json").read_text()
    raw = value.encode()
    for form in (value, value[2:14], raw.hex(), base64.b64encode(raw).decode().rstrip("=")):
        assert form not in outputs, form
