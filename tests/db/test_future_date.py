"""A sweep dated in the future is bad input: its records
would carry a ``measuredAt`` that outranks every real sweep until that day (a newer published record
is never replaced by an older day's), so one mistyped year froze every record it touched. Refused
before the lock or any server, for ``--date``, ``--shard`` and a merged shard's manifest; tomorrow
(UTC) is still accepted, for time zones ahead of UTC.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest

from tests.db.sweeprepo import catalog_text, head, init_repo, porcelain, staging_leftovers, sweep, well_behaved

# days after today, counted when each test runs (a run may cross midnight after collection)
FUTURE_DAYS = [3, 365, 36 * 366]


def _today() -> dt.date:
    return dt.datetime.now(dt.timezone.utc).date()


@pytest.fixture
def repo(tmp_path):
    return init_repo(tmp_path / "repo", catalog_text([("alpha", well_behaved(2))]))


@pytest.mark.parametrize("days", FUTURE_DAYS, ids=lambda d: f"today+{d}d")
@pytest.mark.parametrize("mode", [(), ("--commit",), ("--shard", "1/1", "--out", "{tmp}/part")],
                         ids=["plain", "commit", "shard"])
def test_a_future_sweep_date_is_refused_before_anything_runs(repo, tmp_path, days, mode):
    day = _today() + dt.timedelta(days=days)
    sha = head(repo)
    code, out, err = sweep(repo, "--all", "--isolation", "host", "--date", day.isoformat(),
                           *(m.replace("{tmp}", str(tmp_path)) for m in mode))
    assert code == 2 and f"--date {day.isoformat()} is after" in err and "[1/" not in err, err
    assert head(repo) == sha and porcelain(repo) == "" and staging_leftovers(repo) == []
    assert not (tmp_path / "part").exists() and not (repo / "results").exists()


def test_merging_shards_of_a_future_date_is_refused(repo, tmp_path):
    today = _today()
    part = tmp_path / "part"
    code, _, err = sweep(repo, "--all", "--isolation", "host", "--date", today.isoformat(), "--shard", "1/1",
                         "--out", str(part))
    assert code == 0, err
    later = (today + dt.timedelta(days=400)).isoformat()
    manifest = json.loads((part / "shard.json").read_text())
    (part / "shard.json").write_text(json.dumps({**manifest, "date": later}))
    record = part / "results/alpha/measurement.json"
    record.write_text(record.read_text().replace(f'"measuredAt": "{today.isoformat()}', f'"measuredAt": "{later}'))

    code, _, err = sweep(repo, "--merge", str(part), "--commit")

    assert code == 2 and f"the shards' date {later} is after" in err, err
    assert porcelain(repo) == "" and not (repo / "results").exists()
