"""Input errors a person can act on: a malformed ``--date`` names the expected
format, an unknown server name gets a "did you mean", and a launch command whose program cannot be
found is bad input — exit 2, nothing launched, nothing written."""

from __future__ import annotations

import contextlib
import io
import stat
import sys
from pathlib import Path

import pytest

from harness.cli import main
from tests.conftest import REPO, fixture_command
from tests.db.sweeprepo import catalog_text, init_repo, well_behaved


def cli(*argv: str) -> tuple[int, str, str]:
    """``mcp-context-cost ARGV`` in-process: (exit code, stdout, stderr); argparse's exit included."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("command", ["sweep", "slice"])
@pytest.mark.parametrize("text", ["30/11/2026", "2026-13-01", "2026-11-31", "2026-1-5", "20261130", "tomorrow",
                                  "2026-11-30T00:00", "\x1b[31m2026\x1b[0m"])
def test_a_malformed_date_names_the_expected_format(command, text, tmp_path):
    code, out, err = cli(command, "--date", text, "--catalog", str(REPO / "servers.yaml"))
    assert code == 2
    assert "expected a date as YYYY-MM-DD (e.g. 2026-11-30)" in err
    assert "fromisoformat" not in err and "Traceback" not in err
    assert "\x1b" not in err  # the user's text is escaped before it reaches the terminal
    assert out == ""


@pytest.mark.parametrize("typo, suggestion", [("memroy", "memory"), ("fecth", "fetch"), ("filesytem", "filesystem"),
                                              ("gihtub", "github"), ("Memory", "memory")])
def test_unknown_server_suggests_the_nearest_entry(typo, suggestion, tmp_path):
    code, out, err = cli("measure", "--server", typo, "--catalog", str(REPO / "servers.yaml"),
                         "--results", str(tmp_path / "results"), "--badges", str(tmp_path / "badges"))
    assert code == 2
    assert f"no entry named '{typo}'" in err and f'(did you mean "{suggestion}"?)' in err
    assert not (tmp_path / "results").exists()


def test_a_name_far_from_every_entry_gets_no_guess(tmp_path):
    code, _, err = cli("measure", "--server", "qqqqqqqq", "--catalog", str(REPO / "servers.yaml"))
    assert code == 2 and "no entry named 'qqqqqqqq'" in err and "did you mean" not in err


def test_sweep_only_names_every_unknown_entry_with_a_suggestion(tmp_path):
    root = init_repo(tmp_path / "repo", catalog_text([("alpha-server", well_behaved(3)),
                                                      ("bravo-server", well_behaved(4))]))
    code, out, err = cli("sweep", "--root", str(root), "--only", "alpha-sever,bravo-server,zzz")
    assert code == 2
    assert 'alpha-sever (did you mean "alpha-server"?)' in err and "zzz" in err
    assert "bravo-server," not in err.split("catalog:")[1]  # a known name is not reported
    assert not (root / "results").exists()  # nothing was measured


def _not_executable(tmp: Path) -> str:
    script = tmp / "server.py"
    script.write_text("print('never runs')\n")
    script.chmod(script.stat().st_mode & ~(stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH))
    return str(script)


@pytest.mark.parametrize("isolation", ["host", "sandbox"])
@pytest.mark.parametrize("make, named", [
    (lambda tmp: "mcp-context-cost-no-such-program --stdio", "command not found on PATH: mcp-context-cost-no-such-program"),
    (lambda tmp: "npx-typo -y @modelcontextprotocol/server-memory", "command not found on PATH: npx-typo"),
    (lambda tmp: str(tmp / "missing" / "server") + " --stdio", "command not found or not executable"),
    (_not_executable, "command not found or not executable"),
], ids=["not-on-path", "typo-of-npx", "absolute-missing", "not-executable"])
def test_a_command_that_cannot_be_found_is_bad_input_before_any_launch(make, named, isolation, tmp_path):
    code, out, err = cli("measure", "--command", make(tmp_path), "--name", "missing", "--isolation", isolation,
                         "--results", str(tmp_path / "results"), "--badges", str(tmp_path / "badges"))
    assert code == 2, out + err
    assert named in err and "(nothing was launched)" in err and err.startswith("error: --command: ")
    assert not (tmp_path / "results").exists() and not (tmp_path / "badges").exists()


def test_a_catalog_entry_whose_program_is_missing_is_bad_input(tmp_path):
    catalog = tmp_path / "servers.yaml"
    catalog.write_text(catalog_text([("ghost", "mcp-context-cost-ghost-program --stdio")]), encoding="utf-8")
    code, out, err = cli("measure", "--server", "ghost", "--catalog", str(catalog), "--isolation", "host",
                         "--results", str(tmp_path / "results"), "--badges", str(tmp_path / "badges"))
    assert code == 2 and "entry 'ghost': command not found on PATH: mcp-context-cost-ghost-program" in err
    assert not (tmp_path / "results").exists()


def test_a_program_that_exists_still_launches(tmp_path):
    code, out, err = cli("measure", "--command", fixture_command("well_behaved"), "--name", "present", "--single",
                         "--isolation", "host", "--results", str(tmp_path / "results"),
                         "--badges", str(tmp_path / "badges"))
    assert code == 0, out + err
    assert (tmp_path / "results" / "present" / "measurement.json").exists()


@pytest.mark.parametrize("url", ["ftp://mcp.example.com/mcp", "example.com/mcp", "http://", "https:///mcp",
                                 "file:///etc/passwd", "javascript:alert(1)", "https://exa mple.com/mcp",
                                 "mcp.example.com:443/mcp"])
def test_a_url_that_is_not_http_is_bad_input_before_any_connection(url, tmp_path):
    """``--url`` names a Streamable HTTP endpoint: anything without an http(s) scheme and a host is
    the person's typo (exit 2, nothing written), not an ``unreachable`` server."""
    code, out, err = cli("measure", "--url", url, "--name", "remote", "--results", str(tmp_path / "results"),
                         "--badges", str(tmp_path / "badges"))
    assert code == 2, out + err
    assert err.startswith("error: --url ") and "http:// or https://" in err
    assert not (tmp_path / "results").exists() and not (tmp_path / "badges").exists()


# Each loads the whole catalog: one command in the fast loop, all three in the full suite.
@pytest.mark.parametrize("command", ["divergence", *(pytest.param(c, marks=pytest.mark.slow)
                                                    for c in ["cross-check", "capability-probe"])])
def test_beside_the_headline_commands_suggest_the_nearest_entry_for_only(command, monkeypatch):
    """``--only`` on the beside-the-headline commands names each unknown entry with its nearest
    catalog name, as ``sweep --only`` does (and checks names before anything else)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-unused")
    code, out, err = cli(command, "--root", str(REPO), "--only", "memroy,time,evrything", "--no-regen")
    assert code == 2, out + err
    assert 'memroy (did you mean "memory"?)' in (out + err) and 'evrything (did you mean "everything"?)' in out + err
    assert "time," not in (out + err).split("catalog:")[1]


@pytest.mark.parametrize("argv", [["sweep", "--concurrency"], ["divergence", "--top"], ["cross-check", "--top"],
                                  ["capability-probe", "--top"], ["capability-probe", "--concurrency"],
                                  ["audit", "--no-discover", "--concurrency"], ["audit", "--no-discover", "--context"]],
                         ids=lambda argv: " ".join(argv))
@pytest.mark.parametrize("text", ["0", "-1", "x", "1.5", "²", "", "1" * 13])
def test_a_count_that_is_not_a_whole_number_of_at_least_one_says_so(argv, text, tmp_path, monkeypatch):
    """Every count option (concurrency, --top, --context) answers one way: what was expected and what
    was typed — never argparse's "invalid _positive value" (a private function's name), and never a
    concurrency of 0 taken as 1. (An empty --root and no configs: nothing could launch either way.)"""
    monkeypatch.chdir(tmp_path)
    root = [] if argv[0] == "audit" else ["--root", str(tmp_path)]
    code, out, err = cli(*argv, text, *root)
    assert code == 2, out + err
    assert "expected a whole number from 1 to" in err and "invalid" not in err, err
    assert "Traceback" not in err


@pytest.mark.parametrize("argv", [["measure", "--server", "memory"], ["slice"], ["sweep", "--only", "memory"],
                                  ["regen"], ["divergence", "--only", "memory"], ["capability-probe"]],
                         ids=lambda argv: argv[0])
def test_a_catalog_command_outside_a_clone_says_where_the_catalog_is(argv, tmp_path, monkeypatch):
    """Installed with pipx and run in an empty directory, a command that reads servers.yaml says what
    the catalog is and where to run it — not a bare ``[Errno 2] No such file or directory``."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-unused")
    code, out, err = cli(*argv)
    assert code == 2, out + err
    text = " ".join((out + err).split())
    assert "servers.yaml: no such file" in text and "clone of the mcp-context-cost repository" in text, text
    assert "Errno" not in text and not any(tmp_path.iterdir())


@pytest.fixture
def fresh_isolation_check():
    from harness.probe import isolation

    isolation._bwrap_works.cache_clear()
    yield
    isolation._bwrap_works.cache_clear()  # the next test sees this machine's real answer again


def _isolation_argv(command: str, tmp_path: Path, marker: Path) -> list[str]:
    if command == "audit":
        config = tmp_path / "mcp.json"
        config.write_text('{"mcpServers": {"spy": {"command": "%s", "args": ["-c", "open(%r, \\"w\\")"]}}}'
                          % (sys.executable, str(marker)), encoding="utf-8")
        return ["audit", "--no-discover", "--config", str(config), "--single"]
    catalog = tmp_path / "servers.yaml"
    catalog.write_text(catalog_text([("spy", f"{sys.executable} -c \"open('{marker}', 'w')\"")]), encoding="utf-8")
    if command == "measure":
        return ["measure", "--server", "spy", "--catalog", str(catalog), "--results", str(tmp_path / "results"),
                "--badges", str(tmp_path / "badges")]
    return [command, "--root", str(tmp_path), "--only", "spy"]


@pytest.mark.parametrize("command", ["measure", "sweep", "capability-probe", "audit"])
@pytest.mark.parametrize("mode", ["docker", "sandbox"])
def test_an_isolation_this_machine_cannot_give_is_bad_input_before_any_launch(command, mode, tmp_path, monkeypatch,
                                                                               fresh_isolation_check):
    """``--isolation docker`` without a reachable Docker daemon, or ``sandbox`` without a working
    bubblewrap, is the person's choice that cannot be met here: exit 2 saying so and what to use
    instead — never every server recorded as its own startup-failure."""
    marker = tmp_path / "launched"
    if mode == "docker":
        monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-docker.sock")
        expected = "--isolation docker: "
    else:
        monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))  # no bwrap to find
        expected = "--isolation sandbox: bubblewrap cannot create a sandbox here"
    argv = _isolation_argv(command, tmp_path, marker)
    code, out, err = cli(*argv, "--isolation", mode)
    assert code == 2, out + err
    assert expected in err and "--isolation host" in err, err
    assert not marker.exists() and not (tmp_path / "results").exists() and not (tmp_path / "badges").exists()
