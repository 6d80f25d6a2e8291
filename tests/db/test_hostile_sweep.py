"""Acceptance for the sweep: a real git repository in a temp dir, a catalog of hostile
fixture servers (``leaks_secrets`` in each of its modes, ``hostile_text`` in each of its modes),
swept and committed. The proxy and index credentials the sweep hands its servers, and a declared
name's host value (which the sweep never hands out), appear in no file of the working tree, in no
commit (``git log -p --all``) and in nothing printed; no published file holds a raw control
character, no printed line a workflow command, and the hostile capture still re-derives."""

from __future__ import annotations

import pytest

from harness.core.rederive import rederive
from tests.db.sweeprepo import catalog_text, fixture, git, init_repo, porcelain, records, sweep, well_behaved
from tests.hostile import (MARKER, PASSWORD, SENTINEL, assert_file_safe, assert_safe_output,
                           assert_secret_absent)

TAIL = 1024
PROXY = f"http://proxyuser:{PASSWORD}@127.0.0.1:9"
INDEX = f"https://__token__:{PASSWORD}@pypi.invalid/simple"
LEAKS = ("--leak=HTTP_PROXY", "--leak=https_proxy", "--leak=PIP_INDEX_URL", "--leak=npm_config_registry",
         "--leak=MY_KEY", f"--tail-bytes={TAIL}")


def _catalog() -> str:
    entries = [{"name": f"leak-{where}", "command": fixture("leaks_secrets", *LEAKS, "--where", where), "env": ["MY_KEY"]}
               for where in ("describe", "error", "stderr", "noise", "cursor")]
    entries += [{"name": f"hostile-{where}", "command": fixture("hostile_text", "--where", where)}
                for where in ("names", "error", "stderr")]
    entries.append({"name": "plain", "command": well_behaved(3)})
    return catalog_text(entries)


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """One sweep of the hostile catalog, committed, shared by the checks below."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        for name, value in (("HTTP_PROXY", PROXY), ("https_proxy", PROXY), ("PIP_INDEX_URL", INDEX),
                            ("npm_config_registry", INDEX), ("MY_KEY", SENTINEL),
                            ("MCP_CONTEXT_COST_STDERR_TAIL_BYTES", str(TAIL))):
            monkeypatch.setenv(name, value)
        root = init_repo(tmp_path_factory.mktemp("hostile") / "repo", _catalog())
        code, out, err = sweep(root, "--all", "--commit", "--isolation", "host", "--concurrency", "4")
    assert code == 0, out + err
    return root, out, err


@pytest.mark.slow
def test_no_secret_reaches_a_file_a_commit_or_the_output(swept):
    root, out, err = swept
    recs = records(root)
    assert len(recs) == 9 and porcelain(root) == ""
    assert {recs[f"leak-{w}"]["status"] for w in ("describe", "noise")} == {"measured"}
    assert "[redacted]" in recs["leak-describe"]["serverInstructions"]  # the proxy credentials were echoed
    for secret in (PASSWORD, SENTINEL):
        assert_secret_absent(secret, texts=(out, err), roots=(root,), repos=(root,))
    assert "127.0.0.1:9" in recs["leak-describe"]["serverInstructions"]  # only the credential is masked


def test_hostile_text_is_escaped_in_every_output_and_file(swept):
    root, out, err = swept
    assert_safe_output(out, "the sweep's stdout")
    assert_safe_output(err, "the sweep's progress")
    assert MARKER in err  # the failures' notes are shown, escaped
    published = [p for top in ("results", "badges", "docs", "history.csv") for p in
                 ([root / top] if (root / top).is_file() else (root / top).rglob("*")) if p.is_file()]
    assert len(published) > 20
    for path in published:
        assert_file_safe(path)
    assert_safe_output(git(root, "log", "-1", "--format=%B"), "the commit message")
    hostile = records(root)["hostile-names"]
    assert any("\ud800" in tool["name"] for tool in hostile["rawToolsCapture"])  # kept exactly
    assert rederive(hostile).ok


@pytest.mark.parametrize("value", ["x\x9b31m ##[error]pwned \u202e", "\u2028::error::pwned", "pwned \ud800"])
def test_a_hostile_catalog_error_is_printed_escaped(value, tmp_path):
    """The catalog is edited by pull requests: its text reaches the log only escaped, by every
    command that reports a bad catalog."""
    import contextlib
    import io

    from harness.action import workflow_catalog
    from harness.cli import main

    root = init_repo(tmp_path / "repo", catalog_text([{"name": value, "command": well_behaved(3)}]))
    code, out, err = sweep(root, "--all")
    assert code == 2 and "error:" in err
    assert_safe_output(out + err, "the sweep's error")
    for argv, run in ((["slice", "--catalog", str(root / "servers.yaml")], main),
                      (["changed", "--base", str(tmp_path / "none.yaml"), "--head", str(root / "servers.yaml")],
                       workflow_catalog.main)):
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            assert run(argv) == 2
        assert_safe_output(printed.getvalue(), f"{argv[0]}'s error")
