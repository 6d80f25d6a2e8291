"""A registry's (or a mirror's) answer is untrusted: the newest release it names is written into a
command only when it is an exact release, never other words a launcher would run (an option, a
second package, a path, a shell's words, a line break). Anything else leaves the pin as it is and
says why; the other entries still move."""

from __future__ import annotations

import json

import pytest

from harness.db import package_meta, pins
from harness.db.catalog import load_catalog

HOSTILE = ["1.0.1 --package=evil-pkg", "1.0.1\n", "../../evil", "1.1 ; touch /tmp/pwn", "file:/tmp/evil",
           "git+https://example.com/evil.git", "-1.0.0", "latest", "1.0.1 --yes", "2.0.0\n    env: [EVIL]", "^2.0.0",
           ">=2", "2.0.0 || 3.0.0", "1.0.1\u202e"]
CATALOG = """\
reference: npm-entry
servers:

- name: npm-entry
  command: npx -y hostile-mcp@1.0.0 --stdio

- name: pypi-entry
  command: uvx hostile-py-mcp==1.0.0

- name: honest
  command: npx -y honest-mcp@1.0.0
"""


def _registry(tmp_path, latest: str):
    (tmp_path / "reg" / "npm").mkdir(parents=True)
    (tmp_path / "reg" / "pypi").mkdir()
    for name, newest in (("hostile-mcp", latest), ("honest-mcp", "1.2.0")):
        (tmp_path / "reg" / "npm" / f"{name}.json").write_text(
            json.dumps({"name": name, "version": "1.0.0", "dist-tags": {"latest": newest}}))
    (tmp_path / "reg" / "pypi" / "hostile-py-mcp.json").write_text(
        json.dumps({"info": {"name": "hostile-py-mcp", "version": latest}, "releases": {}}))
    return package_meta.RecordedSource(tmp_path / "reg")


@pytest.mark.parametrize("latest", HOSTILE)
def test_a_newest_release_that_is_not_an_exact_release_never_reaches_a_command(tmp_path, latest):
    path = tmp_path / "servers.yaml"
    path.write_text(CATALOG)
    changes = {c.name: c for c in pins.plan(load_catalog(path), _registry(tmp_path, latest))}
    for name in ("npm-entry", "pypi-entry"):
        assert changes[name].command is None and changes[name].note.startswith("left as it is"), changes[name]
    assert changes["honest"].command == "npx -y honest-mcp@1.2.0"
    text = pins.apply(CATALOG, list(changes.values()))
    assert text == CATALOG.replace("honest-mcp@1.0.0", "honest-mcp@1.2.0")


@pytest.mark.parametrize("latest", ["1.0.1", "2.0.0-beta.1", "v2.0.0", "2026.10.19", "1.0.1+build.5"])
def test_an_exact_newest_release_moves_the_pin(tmp_path, latest):
    path = tmp_path / "servers.yaml"
    path.write_text(CATALOG)
    changes = {c.name: c for c in pins.plan(load_catalog(path), _registry(tmp_path, latest))}
    assert changes["npm-entry"].command == f"npx -y hostile-mcp@{latest} --stdio"
