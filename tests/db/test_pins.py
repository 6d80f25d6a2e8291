"""mcp-context-cost pins (harness/db/pins.py): which commands pin an exact release, moving the pins
to the newest release recorded from npm and PyPI, and servers.yaml changing by those words only."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest

from harness.db import package_meta, pins
from harness.db.catalog import Entry, load_catalog
from tests.conftest import REPO

RECORDED = package_meta.RecordedSource(REPO / "tests" / "fixtures" / "registry" / "packages")


@pytest.mark.parametrize("command, spec", [
    ("npx -y @pandacss/mcp@1.11.0", ("npm", "@pandacss/mcp", "1.11.0", "@pandacss/mcp@1.11.0")),
    ("npx -y nx-mcp@0.25.0 --flag x", ("npm", "nx-mcp", "0.25.0", "nx-mcp@0.25.0")),
    ("npx -y --package=@zereight/mcp-gitlab@2.1.60 mcp-gitlab", ("npm", "@zereight/mcp-gitlab", "2.1.60",
                                                                 "@zereight/mcp-gitlab@2.1.60")),
    ("uvx mcp-grafana@2.1.0", ("pypi", "mcp-grafana", "2.1.0", "mcp-grafana@2.1.0")),
    ("uvx mcp-server-fetch==2026.10.24", ("pypi", "mcp-server-fetch", "2026.10.24", "mcp-server-fetch==2026.10.24")),
    ('uvx --with "mcp<2" mcp-server-sqlite==2025.4.25 --db-path /tmp/test.db',
     ("pypi", "mcp-server-sqlite", "2025.4.25", "mcp-server-sqlite==2025.4.25")),
    ("uvx postgres-mcp==0.3.0 --access-mode=restricted", ("pypi", "postgres-mcp", "0.3.0", "postgres-mcp==0.3.0")),
    ('uvx --with "mcp<2" --from awslabs.aws-api-mcp-server==1.5.0 awslabs.aws-api-mcp-server',
     ("pypi", "awslabs.aws-api-mcp-server", "1.5.0", "awslabs.aws-api-mcp-server==1.5.0")),
    ("npx -y @modelcontextprotocol/server-memory@2026.8.31-beta.1", ("npm", "@modelcontextprotocol/server-memory",
                                                                     "2026.8.31-beta.1",
                                                                     "@modelcontextprotocol/server-memory@2026.8.31-beta.1")),
])
def test_pins_read_from_commands(command, spec):
    pin, why = pins.pin_of(Entry(name="x", command=command))
    assert (pin.registry, pin.package, pin.version, pin.spec) == spec and why == ""


@pytest.mark.parametrize("command, why", [
    ("npx -y @playwright/mcp@latest", "a tag or a range"),
    ("npx -y pkg@^1.2.0", "a tag or a range"),
    ("npx -y @upstash/context7-mcp", "not pinned"),
    ("uvx mcp-clickhouse", "not pinned"),
    ("uvx mcp-clickhouse==latest", "a tag or a range"),
    ('uvx --with "mcp<2" mcp-server-sqlite --db-path /tmp/test.db', "not pinned"),
    ("uvx --from git+https://github.com/oraios/serena serena start-mcp-server", "from a repository"),
    ("node server.js", "only npx and uvx"),
])
def test_commands_without_a_pin_say_why(command, why):
    pin, said = pins.pin_of(Entry(name="x", command=command))
    assert pin is None and why in said
    assert pins.pin_of(Entry(name="r", url="https://example.com/mcp"))[1] == "a remote endpoint: nothing to pin"


CATALOG_TEXT = """\
# a comment that must stay
reference: panda
servers:

- name: panda
  command: npx -y @pandacss/mcp@1.11.0
  package: '@pandacss/mcp'

- name: grafana
  command: uvx mcp-grafana@2.0.0 --transport stdio
  package: mcp-grafana

- name: aws-api
  command: uvx --from awslabs.aws-api-mcp-server==1.5.6 awslabs.aws-api-mcp-server
  notes: already the newest

- name: memory-beta
  command: npx -y @modelcontextprotocol/server-memory@2099.1.1
  notes: pinned past the newest on purpose

- name: gone
  command: npx -y no-such-package@1.0.0

- name: unpinned
  command: npx -y nx-mcp

- name: gone-latest
  command: npx -y no-such-package@latest stdio
  package: no-such-package

- name: time-eq
  command: uvx mcp-server-time==2025.1.1 --local-timezone UTC
"""


def test_plan_and_apply_move_only_the_versions(tmp_path):
    path = tmp_path / "servers.yaml"
    path.write_text(CATALOG_TEXT)
    changes = {c.name: c for c in pins.plan(load_catalog(path), RECORDED)}
    assert changes["panda"].command == "npx -y @pandacss/mcp@1.12.1"
    assert changes["grafana"].command == "uvx mcp-grafana@2.1.1 --transport stdio"
    assert changes["aws-api"].command is None and changes["aws-api"].note == "current"
    assert changes["memory-beta"].command is None and "not newer" in changes["memory-beta"].note
    assert changes["gone"].command is None and changes["gone"].note.startswith("left as it is: npm: no recorded")
    assert changes["unpinned"].pin is None and changes["unpinned"].note.startswith("not pinned")
    assert changes["gone-latest"].pin is None and "the registry has no release to pin: npm: no recorded" \
        in changes["gone-latest"].note
    assert changes["time-eq"].command == "uvx mcp-server-time==2026.10.19 --local-timezone UTC"
    new = pins.apply(CATALOG_TEXT, list(changes.values()))
    diff = [(a, b) for a, b in zip(CATALOG_TEXT.splitlines(), new.splitlines()) if a != b]
    assert diff == [("  command: npx -y @pandacss/mcp@1.11.0", "  command: npx -y @pandacss/mcp@1.12.1"),
                    ("  command: uvx mcp-grafana@2.0.0 --transport stdio",
                     "  command: uvx mcp-grafana@2.1.1 --transport stdio"),
                    ("  command: uvx mcp-server-time==2025.1.1 --local-timezone UTC",
                     "  command: uvx mcp-server-time==2026.10.19 --local-timezone UTC")]
    only = pins.plan(load_catalog(path), RECORDED, only={"grafana"})
    assert [c.name for c in only] == ["grafana"]


def test_a_spec_written_twice_is_refused():
    pin = pins.Pin("npm", "a", "1.0.0", "a@1.0.0")
    with pytest.raises(ValueError, match="not written once"):
        pins._replace_spec("npx -y a@1.0.0 --also a@1.0.0", pin, "1.1.0")
    assert pins._replace_spec("npx -y a@1.0.0 --x=b-a@1.0.0x", pin, "1.1.0") == "npx -y a@1.1.0 --x=b-a@1.0.0x"


def _cli(*args):
    done = subprocess.run([sys.executable, "-m", "harness.cli", "pins", *args], capture_output=True, text=True,
                          timeout=300)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.slow
def test_pins_command_reports_then_updates(tmp_path):
    path = tmp_path / "servers.yaml"
    path.write_text(CATALOG_TEXT)
    fixtures = str(REPO / "tests" / "fixtures" / "registry" / "packages")
    code, out, _ = _cli("--catalog", str(path), "--metadata", fixtures)
    assert code == 1 and "panda: @pandacss/mcp 1.11.0 -> 1.12.1" in out and path.read_text() == CATALOG_TEXT
    code, out, _ = _cli("--catalog", str(path), "--metadata", fixtures, "--update")
    assert code == 0 and "3 moved" in out
    assert "# a comment that must stay" in path.read_text() and load_catalog(path).get("panda").command.endswith("@1.12.1")
    code, out, _ = _cli("--catalog", str(path), "--metadata", fixtures)
    assert code == 0 and "0 behind" in out
    code, _, err = _cli("--catalog", str(path), "--only", "pnada")
    assert code == 2 and "panda" in err


def test_the_real_catalog_reads_and_every_entry_says_something():
    catalog = load_catalog(REPO / "servers.yaml")
    for entry in catalog.entries:
        pin, why = pins.pin_of(entry)
        assert (pin is None) == bool(why), entry.name
    imported = [e for e in catalog.entries if e.command and "@" in e.command and e.package]
    assert any(pins.pin_of(dataclasses.replace(e))[0] for e in imported)


@pytest.mark.slow
def test_live_registries_answer_the_newest_release(tmp_path):
    live = package_meta.LiveSource(record_to=tmp_path)
    memory = live.npm("@modelcontextprotocol/server-memory")
    assert memory.bins and memory.latest == memory.version
    time = live.pypi("mcp-server-time")
    assert "mcp-server-time" in time.bins and time.latest
    assert (tmp_path / "npm" / "@modelcontextprotocol__server-memory.json").is_file()
    assert RECORDED.__class__(tmp_path).pypi("mcp-server-time").bins == time.bins  # what was recorded reads back
    with pytest.raises(package_meta.MetadataError, match="E404"):
        live.npm("no-such-package-mcp-context-cost-zz")
