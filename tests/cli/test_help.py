"""Help says what happens: every command's help is
held against what it does with git.

* A command with a ``--commit`` option says, in its one-line help, its description and the option's
  help, that it commits only with ``--commit`` — and run in a real repository it makes no commit
  without the option and exactly one with it.
* A command without ``--commit`` never claims to commit — and run in a real repository it makes none.

Every registered command is checked (a command added later is covered by the help rule at once);
the behaviour table must hold every command that has ``--commit``.
"""

from __future__ import annotations

import argparse
import re

import pytest

from harness.cli import build_parser
from tests.cli.test_input_errors import cli
from tests.db.sweeprepo import catalog_text, commit_count, init_repo, porcelain, well_behaved

PARSER = build_parser()
SUBPARSERS = next(a for a in PARSER._actions if isinstance(a, argparse._SubParsersAction))
COMMANDS = dict(SUBPARSERS.choices)
ONE_LINE = {a.dest: a.help for a in SUBPARSERS._choices_actions}
# In the help of a command without --commit, "commit" only ever appears denied.
DENIED = re.compile(r"never commits|commits nothing|does not commit|nothing is committed|makes no commit", re.IGNORECASE)


def option_help(parser: argparse.ArgumentParser, flag: str) -> str | None:
    return next((a.help for a in parser._actions if flag in a.option_strings), None)


def help_text(name: str) -> str:
    return " ".join(COMMANDS[name].format_help().split())


def test_the_known_commands_are_registered():
    assert {"measure", "verify", "slice", "sweep", "regen"} <= set(COMMANDS)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_help_matches_the_commit_option(name):
    parser, one_line = COMMANDS[name], ONE_LINE[name] or ""
    if option_help(parser, "--commit") is None:
        for text in (one_line, help_text(name)):
            for found in re.finditer(r"commit\w*", text, re.IGNORECASE):
                window = text[max(0, found.start() - 40): found.end() + 40]
                assert DENIED.search(window), f"{name} --help claims to commit: ...{window}..."
        return
    assert "commits only with --commit" in one_line, one_line
    assert "Nothing is committed unless --commit is given" in " ".join((parser.description or "").split())
    assert "without it they are written but nothing is committed" in " ".join(option_help(parser, "--commit").split())


def test_the_top_level_help_says_which_command_commits():
    text = " ".join(PARSER.format_help().split())
    assert "Only `sweep --commit` makes a git commit" in text


@pytest.fixture
def repo(tmp_path):
    """A repository with one fixture server, swept and committed once (so verify has a record)."""
    root = init_repo(tmp_path / "repo", catalog_text([("alpha", well_behaved(3))]))
    code, out, err = cli("sweep", "--root", str(root), "--all", "--commit", "--isolation", "host")
    assert code == 0, out + err
    return root


# command -> argv run in the repository (``{root}`` filled in), the exit code it must end with.
BEHAVIOUR = {
    "measure": (["--server", "alpha", "--catalog", "{root}/servers.yaml", "--results", "{root}/results",
                 "--badges", "{root}/badges", "--single", "--isolation", "host"], 0),
    "verify": (["{root}/results/alpha/measurement.json"], 0),
    "slice": (["--catalog", "{root}/servers.yaml"], 0),
    "regen": (["--root", "{root}"], 0),
    "sweep": (["--root", "{root}", "--all", "--isolation", "host"], 0),
}


def test_every_command_with_commit_is_exercised():
    with_commit = {name for name, parser in COMMANDS.items() if option_help(parser, "--commit") is not None}
    assert with_commit <= set(BEHAVIOUR)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BEHAVIOUR))
def test_no_command_commits_without_commit(name, repo):
    argv, expected = BEHAVIOUR[name]
    before = commit_count(repo)
    code, out, err = cli(name, *(a.format(root=repo) for a in argv))
    assert code == expected, out + err
    assert commit_count(repo) == before
    if option_help(COMMANDS[name], "--commit") is not None and porcelain(repo):
        code, out, err = cli(name, *(a.format(root=repo) for a in argv), "--commit")
        assert code == 0 and commit_count(repo) == before + 1, out + err


@pytest.mark.slow
def test_sweep_without_commit_leaves_its_writes_for_the_user(repo):
    (repo / "servers.yaml").write_text(catalog_text([("alpha", well_behaved(4))]), encoding="utf-8")
    before = commit_count(repo)
    code, out, err = cli("sweep", "--root", str(repo), "--all", "--isolation", "host")
    assert code == 0, err
    assert commit_count(repo) == before and "results/alpha/measurement.json" in porcelain(repo)
    assert "NOT committed" in out.splitlines()[-1]
    # a bot commit never carries what another run left uncommitted; it refuses, naming them
    code, out, err = cli("sweep", "--root", str(repo), "--all", "--isolation", "host", "--commit")
    assert code == 2 and "  results/alpha/measurement.json\n" in err and commit_count(repo) == before, out + err


DOCS = ("README.md", "docs/METHODOLOGY.md", "docs/ARCHITECTURE.md", "docs/AUDIT.md", "docs/ACTION.md",
        "docs/SECURITY.md", "docs/OPERATIONS.md", "tests/conformance/README.md")
# `sweep --only a,b`, `mcp-context-cost audit --changed`, a code-block line `.venv/bin/mcp-context-cost regen --backfill`
_MENTION = re.compile(r"(?:^|[`/\s])(?:mcp-context-cost\s+)?(" + "|".join(map(re.escape, sorted(COMMANDS, key=len,
                                                                                                  reverse=True)))
                      + r")((?:\s+(?:\[|\]|\||[-\w.,/=<>…|]+))*)")


def documented_flags() -> set[tuple[str, str, str]]:
    """(file, command, --flag) for every flag the docs show beside a command name: in an inline code
    span, or on a code-block line before its ``#`` comment."""
    from tests.conftest import REPO

    found = set()
    for doc in DOCS:
        text = (REPO / doc).read_text(encoding="utf-8")
        pieces = re.findall(r"`([^`\n]+)`", text)
        pieces += [line.split("  #")[0] for block in re.findall(r"```sh\n(.*?)```", text, re.DOTALL)
                   for line in block.splitlines()]
        for piece in pieces:
            for match in _MENTION.finditer(piece):
                for flag in re.findall(r"(?<![\w-])--[a-z][a-z-]*", match.group(2)):
                    found.add((doc, match.group(1), flag))
    return found


def test_every_flag_the_docs_show_exists():
    """README and docs name only options the command really has (they once promised
    ``audit --changed`` and ``audit --suggest``, which audit does not take)."""
    flags = documented_flags()
    assert {("README.md", "regen", "--backfill"), ("README.md", "measure", "--changed")} <= flags  # not vacuous
    missing = sorted((doc, name, flag) for doc, name, flag in flags
                     if not any(flag in a.option_strings for a in COMMANDS[name]._actions))
    assert missing == []


def test_measure_says_where_it_caches() -> None:
    """A first run fills a folder outside ``--out``: the help names it, how to move it and that it may go."""
    said = help_text("measure")
    assert "$MCP_CONTEXT_COST_CACHE" in said and "~/.cache/mcp-context-cost" in said
    assert "deleting it" in said
