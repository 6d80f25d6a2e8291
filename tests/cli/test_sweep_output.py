"""What ``sweep`` prints, captured from real sweeps of fixture servers in
real git repositories: measured, failed (the server's own failure and one of the measuring
machine's network) and unchanged entries in one run.

Asserted: the per-status counts (headline and table), one whole reason per failure — in the
progress lines and in the summary, never cut —, the environment failure counted apart, and the
last line: what was written, whether it was committed, and commands that really commit or discard it.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess

import pytest

from harness.db import failure_reason
from harness.probe import build_record as record
from harness.util import schemas
from tests.db.sweeprepo import (
    catalog_text, commit_catalog, commit_count, fixture, git, head, init_repo, porcelain, records, sweep, well_behaved,
)

# A server that dies with a long, decisive last line (longer than any fixed cut), and one whose
# launcher cannot reach the package registry: the measuring machine's network, not the server.
LONG = ("npm error 404 The requested resource '@example/definitely-not-published-mcp-server@latest' could not be "
        "found or you do not have permission to access it, and nothing here was cut in the middle of a word")
OFFLINE = ("npm error code ENOTFOUND\nnpm error network request to https://registry.npmjs.org/@example%2fmcp "
           "failed, reason: getaddrinfo ENOTFOUND registry.npmjs.org")


def _dies_with(stderr: str) -> str:
    script = f"import sys; sys.stderr.write({stderr!r} + '\\n'); sys.exit(1)"
    return shlex.join(["python3", "-c", script])


ENTRIES = [("alpha", well_behaved(3)), ("bravo", well_behaved(4)), ("gone-404", _dies_with(LONG)),
           ("offline", _dies_with(OFFLINE)), ("refuses", fixture("jsonrpc_error", "--on", "initialize"))]


@pytest.fixture
def environment_evidence(monkeypatch):
    """Until the probe classifies environment failures itself (the optional ``environmentEvidence``
    field another change adds), give the record of a launch that could not reach the registry that
    field, and let the schema accept it. When the probe sets the field, this adds nothing."""
    real_build = record.build

    def build(*args, **kwargs):
        rec = real_build(*args, **kwargs)
        tail = rec.get("stderrTail") or ""
        if "environmentEvidence" not in rec and rec["totalTokens"] is None and "ENOTFOUND registry.npmjs.org" in tail:
            rec["environmentEvidence"] = next(line for line in tail.splitlines() if "ENOTFOUND registry" in line)
        return rec

    real_validator = schemas.validator

    def validator(name):
        if name != "measurement":
            return real_validator(name)
        schema = json.loads(schemas.schema_file(name).read_text(encoding="utf-8"))
        schema["properties"].setdefault("environmentEvidence", {"type": "string"})
        cls = type(real_validator(name))
        return cls(schema, format_checker=cls.FORMAT_CHECKER)

    monkeypatch.setattr(record, "build", build)
    monkeypatch.setattr(schemas, "validator", validator)


def _table(out: str) -> dict[str, tuple[str, str, str]]:
    """status → (servers, unchanged, environment) from the printed counts table."""
    rows = {}
    for line in out.splitlines():
        cells = line.split()
        if len(cells) == 4 and cells[1].isdigit() and cells[2].isdigit():
            rows[cells[0]] = tuple(cells[1:])
    return rows


def _server_line(out: str, name: str) -> str:
    (found,) = [line for line in out.splitlines() if line.startswith(f"  {name} ")]
    return found


@pytest.mark.slow
def test_summary_counts_reasons_and_commit_line(tmp_path, environment_evidence):
    root = init_repo(tmp_path / "repo", catalog_text(ENTRIES))
    code, out, err = sweep(root, "--all", "--commit", "--isolation", "host")
    assert code == 0, err
    sha = head(root)
    assert out.splitlines()[-1].startswith(f"committed {sha[:12]}: wrote 5 records, 5 badges, history.csv and the pages")
    assert f"to undo it: git -C {shlex.quote(str(root))} revert {sha[:12]}" in out.splitlines()[-1]

    # The same day again, with bravo changed: alpha and the failures are unchanged, bravo is new.
    commit_catalog(root, catalog_text([e if e[0] != "bravo" else ("bravo", well_behaved(6)) for e in ENTRIES]))
    code, out, err = sweep(root, "--all", "--isolation", "host")
    assert code == 0, err
    recs = records(root)
    statuses = {name: rec["status"] for name, rec in recs.items()}
    assert statuses["alpha"] == statuses["bravo"] == "measured"
    assert all(statuses[n] not in ("measured", "dynamic") for n in ("gone-404", "offline", "refuses"))
    assert failure_reason.is_environment(recs["offline"]) and not failure_reason.is_environment(recs["gone-404"])

    unchanged = {n for n in statuses if n != "bravo"}
    # "unchanged" overlaps the other counts, so it is said apart from them (it once read as a third kind)
    assert out.splitlines()[0] == f"sweep {recs['alpha']['measuredAt'][:10]}: 5 servers: 2 measured, 3 failed " \
                                  f"(1 environment); {len(unchanged)} of the 5 unchanged"
    table = _table(out)
    assert table["measured"] == ("2", "1", "-")
    failed_statuses = {statuses[n] for n in ("gone-404", "offline", "refuses")}
    for status in failed_statuses:
        names = [n for n, s in statuses.items() if s == status]
        env = sum(1 for n in names if n == "offline")
        assert table[status] == (str(len(names)), str(len(names)), str(env)), (status, table)

    # One whole reason per failure, in the summary and in the progress lines; the environment apart.
    assert _server_line(out, "gone-404").endswith(f"  {LONG} (unchanged)")
    offline = _server_line(out, "offline")
    assert "[environment] " in offline and "registry.npmjs.org" in offline
    refuses = _server_line(out, "refuses")
    assert "[environment]" not in refuses and "Traceback" not in out + err
    assert re.search(r"  bravo +measured +\d[\d,]* tokens, 6 tools$", out, re.MULTILINE)
    progress = [line for line in err.splitlines() if line.startswith("[")]
    assert len(progress) == 5 and any(line.endswith(f"gone-404: {statuses['gone-404']} — {LONG}") for line in progress)
    assert any(line.startswith("[") and "offline" in line and "(environment)" in line for line in progress)

    # The last line: written, not committed, and the commands — which really do what they say.
    last = out.splitlines()[-1]
    assert last.startswith("wrote 1 record, 1 badge, history.csv and the pages: ") and "NOT committed" in last
    commit_cmd = last.split("commit: ", 1)[1].split(" · discard: ")[0]
    discard_cmd = last.split(" · discard: ", 1)[1]
    dirty = porcelain(root)
    assert dirty and "bravo" in dirty
    subprocess.run(["bash", "-c", discard_cmd], check=True, capture_output=True)
    assert porcelain(root) == ""

    code, out, err = sweep(root, "--all", "--isolation", "host")
    before = commit_count(root)
    subprocess.run(["bash", "-c", out.splitlines()[-1].split("commit: ", 1)[1].split(" · discard: ")[0]],
                   check=True, capture_output=True)
    assert porcelain(root) == "" and commit_count(root) == before + 1
    assert git(root, "log", "-1", "--format=%s").strip().startswith("sweep ")
    assert commit_cmd  # the first run printed one too


def test_a_status_the_summary_does_not_know_is_counted_under_its_own_name(tmp_path, capsys):
    from harness.db import sweep_summary
    from harness.db.sweep import SweepResult

    recs = {
        "a": {"server": "a", "status": "measured", "totalTokens": 10.0, "toolCount": 1.0, "notes": []},
        "b": {"server": "b", "status": "unreachable", "totalTokens": None, "notes": ["no route to the host"],
              "environmentEvidence": "connect ENETUNREACH 10.0.0.1:443"},
        "c": {"server": "c", "status": "unreachable", "totalTokens": None,
              "notes": ["no HTTP answer: ConnectionError: HTTPSConnectionPool(host='mcp.example.com', port=443): Max "
                        "retries exceeded with url: /mcp (Caused by NameResolutionError(\"HTTPSConnection(host="
                        "'mcp.example.com', port=443): Failed to resolve 'mcp.example.com' ([Errno -2] Name or "
                        "service not known)\")) (phase: initialize)"]},
        "d\x1b[2J": {"server": "d", "status": "timeout", "totalTokens": None, "notes": ["no answer within 60 s\n::error::x"]},
    }
    sweep_summary.show(SweepResult(recs, [], []), "2026-11-30", root=tmp_path, written=[])
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "sweep 2026-11-30: 4 servers: 1 measured, 3 failed (1 environment)"
    assert _table(out)["unreachable"] == ("2", "0", "1") and _table(out)["timeout"] == ("1", "0", "0")
    assert "[environment] connect ENETUNREACH 10.0.0.1:443" in out
    assert _server_line(out, "c").endswith("cannot resolve host mcp.example.com")  # not the exception repr
    assert "\x1b" not in out and "\\x1b[2J" in out and "\n::error" not in out
    assert out.splitlines()[-1] == (f"regenerated the pages; no record, badge or history row changed under {tmp_path}; "
                                    "not a git repository, so nothing was committed")
    assert sweep_summary.describe_written(["results/a/measurement.json", "badges/a.json"]) == \
        "wrote 1 record, 1 badge and the pages"


def test_progress_on_a_narrow_terminal_wraps_whole_words(tmp_path):
    import io

    from harness.db.progress import Progress, in_flight

    stream = io.StringIO()
    progress = Progress(stream=stream, live=True, width=60)
    progress.start(2)
    progress.begin("gone-404")
    progress.done("gone-404", "startup-failure", LONG)
    progress.close()
    lines = [line.rstrip() for line in stream.getvalue().splitlines() if line.strip()]
    assert len(lines) > 3 and all(len(line) <= 60 for line in lines)
    words = set(f"[1/2] gone-404: startup-failure — {LONG}".split())
    assert all(word in words for line in lines for word in line.split())  # no word cut in two
    assert " ".join(lines) == f"[1/2] gone-404: startup-failure — {LONG}"

    names = ["server-number-one", "server-number-two", "server-number-three", "four"]
    assert in_flight(names, 200) == "measuring: " + ", ".join(names)
    assert in_flight(names, 50) == "measuring: server-number-one +3 more"  # whole names only
    assert in_flight(names, 55) == "measuring: server-number-one, server-number-two +2 more"
    assert in_flight([], 40) == ""


def test_headline_counts_unchanged_apart():
    from harness.db.sweep_summary import headline

    two = {"a": {"status": "measured"}, "b": {"status": "timeout"}}
    assert headline(two, set(), "D") == "sweep D: 2 servers: 1 measured, 1 failed"
    assert headline(two, {"a"}, "D") == "sweep D: 2 servers: 1 measured, 1 failed; 1 of the 2 unchanged"
    assert headline(two, {"a", "b"}, "D") == "sweep D: 2 servers: 1 measured, 1 failed; all 2 unchanged"
    assert headline({"a": two["a"]}, {"a"}, "D") == "sweep D: 1 server: 1 measured, 0 failed; unchanged"
