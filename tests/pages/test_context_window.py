"""The context window (core.bands) and the advice percentile (pages.tool_shape) have one home: every
page, script and sentence that names them says the value held there."""

from __future__ import annotations

import re

from harness.audit import suggest
from harness.core import bands
from harness.pages import calculator, dashboard, dashboard_assets, server_page, tool_shape


def test_the_scripts_name_the_window_the_share_is_computed_against():
    for script in (dashboard_assets.SCRIPT, calculator.SCRIPT):
        assert re.findall(r"of (\d+k)", script) and set(re.findall(r"of (\d+k)", script)) == {bands.CONTEXT_LABEL}
        assert "doc.context" in script  # the share itself divides by the page's "context", CONTEXT_WINDOW


def test_the_sentences_follow_the_window(monkeypatch):
    monkeypatch.setattr(bands, "CONTEXT_WINDOW", 100_000)
    monkeypatch.setattr(bands, "CONTEXT_LABEL", "100k")
    text = " ".join(dashboard._how_to_read())
    assert "<b>of 100k</b>" in text and "100,000-token context" in text and "200" not in text
    monkeypatch.setattr(server_page, "CONTEXT_WINDOW", 100_000)
    assert server_page.share(1_000) == "1.0%"


def test_the_advice_sentences_name_the_advice_percentile():
    assert f"the {tool_shape.ADVICE_PERCENTILE}th percentile" in suggest.NOTHING_UNUSUAL
    assert suggest.FIRES_AT == tool_shape.ADVICE_PERCENTILE
