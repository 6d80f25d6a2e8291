"""The deferral resolver, row by row against the spec's table (methodology,
"Where it is deferred away"), every refusal included; settings holding ``false`` vs ``"false"``; a
drop-in that disagrees with the managed file; an unreadable settings file above and below the
deciding one; the threshold as a range above, below and across the line."""

from __future__ import annotations

import pytest

from harness.audit import deferral as d
from harness.audit.claude_settings import LOCAL, MANAGED, PROJECT, SHELL, USER, Place, settings_places
from harness.audit.model import ABSENT, READ, UNREADABLE
from harness.audit.posture import ABOVE, BELOW, STRADDLES, Band, compare


def shell(**env):
    return Place("shell", SHELL, READ, env=env)


def settings(tier, name=None, state=READ, **env):
    return Place(name or f"{tier}-settings", tier, state, path=f"/x/{tier}", env=env,
                 error="not valid JSON" if state == UNREADABLE else None)


def posture(*places):
    return d.resolve(list(places))


# -- row 1: CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS ---------------------------------------------------
@pytest.mark.parametrize("value", ["1", "true", "TRUE", "True", "yes", "YES", "on", "On"])
def test_ccdeb_true_readings_load_up_front_and_beat_enable_tool_search(value):
    p = posture(shell(CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS=value, ENABLE_TOOL_SEARCH="true"))
    assert p.kind == d.UP_FRONT and p.decided_by == f"{d.CCDEB} in shell"
    assert [r.variable for r in p.readings] == [d.CCDEB]  # read first; nothing after it is consulted


@pytest.mark.parametrize("value", ["0", "false", "FALSE", "no", "No", "off", "OFF"])
def test_ccdeb_false_readings_decide_nothing(value):
    assert posture(shell(CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS=value)).kind == d.DEFERRED
    p = posture(shell(CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS=value, ENABLE_TOOL_SEARCH="false"))
    assert p.kind == d.UP_FRONT and p.decided_by == f"{d.ETS} in shell"


@pytest.mark.parametrize("value", ["2", "maybe", "", " true", "enabled"])
def test_ccdeb_other_values_are_unrecognized(value):
    p = posture(shell(CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS=value, ENABLE_TOOL_SEARCH="true"))
    assert p.kind == d.REFUSED and p.refusal.kind == d.UNDOCUMENTED and p.refusal.variable == d.CCDEB


# -- row 2: ENABLE_TOOL_SEARCH ------------------------------------------------------------------------
def test_ets_true_defers_at_any_size():
    p = posture(shell(ENABLE_TOOL_SEARCH="true", ANTHROPIC_BASE_URL="https://proxy.example.com"))
    assert p.kind == d.DEFERRED and p.percent is None
    assert [r.variable for r in p.readings] == [d.CCDEB, d.ETS]  # BASE_URL only while ETS is unset


def test_ets_false_loads_up_front():
    assert posture(shell(ENABLE_TOOL_SEARCH="false")).kind == d.UP_FRONT


@pytest.mark.parametrize("value, percent", [("auto", 10), ("auto:5", 5), ("auto:0", 0), ("auto:100", 100),
                                            ("auto:07", 7)])
def test_ets_auto_is_a_threshold(value, percent):
    p = posture(shell(ENABLE_TOOL_SEARCH=value))
    assert (p.kind, p.percent) == (d.THRESHOLD, percent)


@pytest.mark.parametrize("value", ["TRUE", "yes", "1", "auto:101", "auto:-1", "auto:5.5", "auto:", "Auto", "",
                                   " true", "auto:1000"])
def test_ets_anything_else_is_undocumented(value):
    p = posture(shell(ENABLE_TOOL_SEARCH=value))
    assert p.kind == d.REFUSED and p.refusal.kind == d.UNDOCUMENTED and p.refusal.variable == d.ETS


# -- row 3: ANTHROPIC_BASE_URL ------------------------------------------------------------------------
@pytest.mark.parametrize("value, kind", [
    ("https://api.anthropic.com", d.DEFERRED), ("https://API.Anthropic.com/v1/", d.DEFERRED),
    ("https://api.anthropic.com.", d.DEFERRED), ("https://proxy.example.com", d.UP_FRONT),
    ("http://localhost:4000", d.UP_FRONT), ("not a url", d.UP_FRONT), ("", d.UP_FRONT),
    ("https://api.anthropic.com.evil.example", d.UP_FRONT)])
def test_base_url_host(value, kind):
    p = posture(shell(ANTHROPIC_BASE_URL=value))
    assert p.kind == kind
    assert "value" not in p.reason or value not in p.reason  # only the host is printed


def test_base_url_credentials_are_never_printed():
    p = posture(settings(USER, ANTHROPIC_BASE_URL="https://user:s3cr3t-pass@gateway.example.com/v1"))
    text = repr(p.to_json())
    assert "s3cr3t-pass" not in text and "gateway.example.com" in text


def test_nothing_set_anywhere_is_the_documented_default():
    p = posture(shell(PATH="/bin"), settings(MANAGED, state=ABSENT), settings(USER))
    assert p.kind == d.DEFERRED and p.decided_by == "default"
    assert [r.state for r in p.readings] == ["unset", "unset", "unset"]


# -- the "not a readable string" row --------------------------------------------------------------
@pytest.mark.parametrize("raw, json_type", [(False, "boolean"), (True, "boolean"), (0, "number"), (None, "null"),
                                            ({"a": 1}, "object"), (["true"], "array")])
def test_a_json_value_that_is_not_a_string_is_unreadable(raw, json_type):
    p = posture(settings(USER, ENABLE_TOOL_SEARCH=raw))
    assert p.kind == d.REFUSED and p.refusal.kind == d.UNREADABLE_VALUE
    assert p.readings[-1].json_type == json_type


def test_false_is_not_the_string_false():
    assert posture(settings(USER, ENABLE_TOOL_SEARCH="false")).kind == d.UP_FRONT
    assert posture(settings(USER, ENABLE_TOOL_SEARCH=False)).refusal.kind == d.UNREADABLE_VALUE
    assert posture(settings(PROJECT, CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS=False)).refusal.kind == d.UNREADABLE_VALUE
    assert posture(settings(PROJECT, CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS="false")).kind == d.DEFERRED


def test_an_unreadable_base_url_does_not_spoil_a_decision_it_would_not_make():
    p = posture(settings(PROJECT, ENABLE_TOOL_SEARCH="true", ANTHROPIC_BASE_URL=42))
    assert p.kind == d.DEFERRED


# -- settings order and the places --------------------------------------------------------------------
def test_first_settings_file_that_sets_a_variable_wins():
    p = posture(settings(LOCAL, ENABLE_TOOL_SEARCH="true"), settings(PROJECT, ENABLE_TOOL_SEARCH="false"),
                settings(USER, ENABLE_TOOL_SEARCH="auto"))
    assert p.kind == d.DEFERRED and p.decided_by == f"{d.ETS} in local-settings"


def test_a_readable_value_above_an_unreadable_one_is_in_force():
    p = posture(settings(PROJECT, ENABLE_TOOL_SEARCH="false"), settings(USER, ENABLE_TOOL_SEARCH=None))
    assert p.kind == d.UP_FRONT


def test_unreadable_settings_file_above_the_deciding_one_refuses():
    p = posture(settings(LOCAL, state=UNREADABLE), settings(USER, ENABLE_TOOL_SEARCH="false"))
    assert p.kind == d.REFUSED and p.refusal.kind == d.UNREADABLE_FILE and "local-settings" in p.refusal.detail


def test_unreadable_settings_file_below_the_deciding_one_decides_nothing():
    # The project file decides both variables read before ENABLE_TOOL_SEARCH's answer; the user file
    # below it is unreadable and decides nothing.
    p = posture(settings(PROJECT, CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS="0", ENABLE_TOOL_SEARCH="false"),
                settings(USER, state=UNREADABLE))
    assert p.kind == d.UP_FRONT and p.decided_by == f"{d.ETS} in project-settings"
    p = posture(settings(PROJECT, CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS="1"), settings(USER, state=UNREADABLE))
    assert p.kind == d.UP_FRONT


def test_unreadable_settings_file_with_nothing_set_above_refuses_the_first_variable():
    p = posture(shell(ENABLE_TOOL_SEARCH="true"), settings(USER, state=UNREADABLE))
    assert p.refusal.kind == d.UNREADABLE_FILE and p.refusal.variable == d.CCDEB


def test_shell_and_settings_disagreeing_is_a_conflict_with_no_order_on_record():
    p = posture(shell(ENABLE_TOOL_SEARCH="true"), settings(USER, ENABLE_TOOL_SEARCH="false"))
    assert p.kind == d.REFUSED and p.refusal.kind == d.CONFLICT and "shell" in p.refusal.detail
    agree = posture(shell(ENABLE_TOOL_SEARCH="false"), settings(USER, ENABLE_TOOL_SEARCH="false"))
    assert agree.kind == d.UP_FRONT


def test_a_conflict_about_base_url_does_not_spoil_an_ets_answer():
    p = posture(shell(ENABLE_TOOL_SEARCH="false", ANTHROPIC_BASE_URL="https://a.example"),
                settings(USER, ANTHROPIC_BASE_URL="https://b.example"))
    assert p.kind == d.UP_FRONT


def test_a_drop_in_disagreeing_with_the_managed_file_refuses():
    p = posture(settings(MANAGED, "managed-settings.json", ENABLE_TOOL_SEARCH="true"),
                settings(MANAGED, "managed-settings.d/10-team.json", ENABLE_TOOL_SEARCH="false"),
                settings(USER, ENABLE_TOOL_SEARCH="auto"))
    assert p.kind == d.REFUSED and p.refusal.kind == d.CONFLICT
    assert "managed-settings.d/10-team.json" in p.refusal.detail


def test_a_drop_in_agreeing_with_the_managed_file_decides():
    p = posture(settings(MANAGED, "managed-settings.json", ENABLE_TOOL_SEARCH="false"),
                settings(MANAGED, "managed-settings.d/10-team.json", ENABLE_TOOL_SEARCH="false"),
                settings(USER, ENABLE_TOOL_SEARCH="true"))
    assert p.kind == d.UP_FRONT


def test_a_managed_drop_in_holding_false_vs_the_file_holding_the_string_false_disagree():
    p = posture(settings(MANAGED, "managed-settings.json", ENABLE_TOOL_SEARCH="false"),
                settings(MANAGED, "managed-settings.d/a.json", ENABLE_TOOL_SEARCH=False))
    assert p.refusal.kind == d.CONFLICT


def test_organisation_override_is_refused_and_the_value_printed():
    p = posture(shell(CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS="1"),
                settings(MANAGED, "managed-settings.json", ENABLE_TOOL_SEARCH="keep-on-for-org"))
    assert p.kind == d.REFUSED and p.refusal.kind == d.ORG_OVERRIDE and "'keep-on-for-org'" in p.refusal.detail
    documented = posture(shell(CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS="1"),
                         settings(MANAGED, "managed-settings.json", ENABLE_TOOL_SEARCH="true"))
    assert documented.kind == d.UP_FRONT


def test_every_refusal_kind_is_distinct_and_answerability_is_published():
    assert len(set(d.REFUSALS)) == len(d.REFUSALS) == 9
    assert d.Refusal(d.UNDOCUMENTED, "x").to_json()["answerableByReader"] is False
    assert d.Refusal(d.UNREADABLE_FILE, "x").to_json()["answerableByReader"] is True


def test_settings_places_are_read_from_disk_with_their_states(machine):
    root = machine.system_root / "etc" / "claude-code"
    (root / "managed-settings.d").mkdir(parents=True)
    (root / "managed-settings.json").write_text('{"env": {"ENABLE_TOOL_SEARCH": "auto:5", "SECRET": "v"}}')
    (root / "managed-settings.d" / "20-b.json").write_text('{"env": {"ENABLE_TOOL_SEARCH": "auto:7"}}')
    (machine.cwd / ".claude").mkdir()
    (machine.cwd / ".claude" / "settings.json").write_text("{broken")
    places = settings_places(machine)
    states = {p.name: p.state for p in places}
    assert states == {"managed-settings.json": READ, "managed-settings.d/20-b.json": READ,
                      ".claude/settings.local.json": ABSENT, ".claude/settings.json": UNREADABLE,
                      "~/.claude/settings.json": ABSENT}
    public = [p.public() for p in places]
    assert public[0]["envNames"] == ["ENABLE_TOOL_SEARCH", "SECRET"] and "'v'" not in repr(public)
    refused = d.resolve(places).refusal  # the unreadable project file leaves CCDEB, read first, unknown
    assert (refused.kind, refused.variable) == (d.UNREADABLE_FILE, d.CCDEB)
    (machine.cwd / ".claude" / "settings.json").unlink()
    assert d.resolve(settings_places(machine)).refusal.kind == d.CONFLICT  # then the drop-in disagreement


# -- the threshold as a range ----------------------------------------------------------------------
BAND = Band(0.19, 1.93, "test band")


@pytest.mark.parametrize("tokens, verdict", [
    ([60_000, 50_000], ABOVE),     # low end 20,900 ≥ 20,000
    ([5_000, 5_000], BELOW),       # high end 19,300 < 20,000
    ([20_000], STRADDLES),         # 3,800 … 38,600 across 20,000
])
def test_threshold_range_above_below_across(tokens, verdict):
    result = compare([(t, None) for t in tokens], 10, 200_000, BAND)
    assert result.verdict == verdict and result.threshold == 20_000


def test_threshold_uses_exact_published_counts_where_the_capture_matches():
    band = Band(0.19, 1.93, "test", exact={"abc": 25_000.0})
    result = compare([(10_000, "abc")], 10, 200_000, band)
    assert (result.verdict, result.low, result.high, result.exact_rows) == (ABOVE, 25_000, 25_000, 1)
    assert compare([(12_000, "other")], 10, 200_000, band).verdict == STRADDLES


def test_a_server_without_a_number_leaves_the_range_unbounded():
    assert compare([(10_000, None), (None, None)], 10, 200_000, BAND).verdict == STRADDLES
    assert compare([(200_000, None), (None, None)], 10, 200_000, BAND).verdict == ABOVE


def test_band_file_with_a_derived_range_is_used_else_the_spec(tmp_path):
    from harness.audit.posture import SPEC_BAND, load_band

    path = tmp_path / "divergence.json"
    assert (load_band(path).low, load_band(path).high) == SPEC_BAND
    path.write_text('{"rows": []}')
    assert (load_band(path).low, load_band(path).high) == SPEC_BAND
    path.write_text('{"range": {"low": 0.5, "high": 1.5}, "rows": [{"canonicalSha256": "s", "claudeTokens": 7}]}')
    band = load_band(path)
    assert (band.low, band.high, band.exact) == (0.5, 1.5, {"s": 7.0})
