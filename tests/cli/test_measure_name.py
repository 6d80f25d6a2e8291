"""An ad-hoc ``measure --name`` that is a catalog entry launched differently is refused before any
launch, however the catalog spells the name; a catalog that cannot hold the name is not parsed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from harness.cli import main
from harness.cli.measure_cmd import _may_name
from harness.util import names
from tests.conftest import REPO

ENTRY = "  command: npx -y @modelcontextprotocol/server-memory@2026.8.31\n  category: official-reference\n"
ABSENT = "no-such-program-mcp-context-cost"


def _catalog(tmp_path: Path, name_line: str) -> Path:
    path = tmp_path / "servers.yaml"
    path.write_text(f"reference: memory\nservers:\n- name: memory\n{ENTRY}- {name_line}\n{ENTRY}", encoding="utf-8")
    return path


def _measure(tmp_path: Path, catalog: Path, name: str, capsys) -> tuple[int, str]:
    code = main(["measure", "--command", f"{ABSENT} --stdio", "--name", name, "--catalog", str(catalog),
                 "--out", str(tmp_path / "out"), "--isolation", "host"])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("name_line", ["name: twin", "name: 'twin'", 'name: "twin"', 'name: "\\x74win"',
                                       'name: "\\u0074\\u0077in"', 'name: "\\U00000074win"',
                                       'name: "tw\\\n    in"'])
def test_a_catalog_name_launched_differently_is_refused(tmp_path, capsys, name_line):
    code, err = _measure(tmp_path, _catalog(tmp_path, name_line), "twin", capsys)
    assert code == 2 and "is the catalog entry launched as" in err and "--server twin" in err
    assert not (tmp_path / "out").exists()


def test_a_name_the_catalog_cannot_hold_goes_on_to_the_launch_checks(tmp_path, capsys):
    code, err = _measure(tmp_path, _catalog(tmp_path, "name: twin"), "another", capsys)
    assert code == 2 and "catalog entry" not in err and ABSENT in err  # refused later: the program is not on PATH


def test_an_invalid_catalog_is_noted_only_when_it_could_hold_the_name(tmp_path, capsys):
    broken = tmp_path / "servers.yaml"
    broken.write_text("servers: [twin\n", encoding="utf-8")
    assert "not a valid catalog" in _measure(tmp_path, broken, "twin", capsys)[1]
    assert "not a valid catalog" not in _measure(tmp_path, broken, "other", capsys)[1]


def test_may_name(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_bytes(b"servers:\n- name: abc\n")
    assert _may_name(path, "abc", 1024) and not _may_name(path, "abd", 1024)
    assert _may_name(path, "abd", 8)  # larger than the bound: parsed, and refused there
    path.write_bytes(b'servers:\n- name: "a\\x62d"\n')
    assert _may_name(path, "abd", 1024)
    assert _may_name(tmp_path / "missing.yaml", "abc", 1024)


def test_a_backslash_that_cannot_spell_a_slug_does_not_make_the_catalog_parsed(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_bytes(b"servers:\n- name: abc\n  evidence: 'it said \\'no\\'; \"\\t\\\\ \\/ \\_\"'\n")
    assert not _may_name(path, "abd", 1024)
    for joined in (b"\n", b"\r\n", "\u2028".encode(), "\x85".encode()):  # an escaped line break joins two lines
        path.write_bytes(b'servers:\n- name: "ab\\' + joined + b'  d"\n')
        assert yaml.safe_load(path.read_bytes())["servers"][0]["name"] == "abd" and _may_name(path, "abd", 1024)


def test_every_other_yaml_escape_yields_a_character_no_slug_holds():
    from yaml.scanner import Scanner

    assert set(Scanner.ESCAPE_CODES) == {"x", "u", "U"}
    for letter, replacement in Scanner.ESCAPE_REPLACEMENTS.items():
        assert not names.is_result_name(f"a{replacement}"), letter


def test_a_catalog_that_cannot_hold_the_name_is_not_even_imported(tmp_path):
    """A plain measure pays for YAML and the catalog's schema only when it reads the catalog: in a fresh process,
    a name the catalog cannot hold leaves both unloaded, and one it could hold loads them."""
    catalog = _catalog(tmp_path, "name: twin")
    script = ("import sys\nfrom harness.cli import main\n"
              f"main(['measure', '--command', '{ABSENT} --stdio', '--name', sys.argv[1], '--catalog', sys.argv[2], "
              "'--out', sys.argv[3], '--isolation', 'host'])\n"
              "print('yaml' in sys.modules, 'harness.db.catalog' in sys.modules)")
    loaded = {name: subprocess.run([sys.executable, "-c", script, name, str(catalog), str(tmp_path / "out")],
                                   cwd=REPO, capture_output=True, text=True, timeout=120).stdout.split()
              for name in ("another", "twin")}
    assert loaded == {"another": ["False", "False"], "twin": ["True", "True"]}
