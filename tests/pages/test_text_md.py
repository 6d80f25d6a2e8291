"""``text.md`` memoises the escape of a string (harness/pages/text.py): what it returns for a string is what
the unmemoised path returns for the same text (a ``str`` subclass takes that path), for every limit, on the
first call and the next, on hostile text and on text longer than the memo takes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.pages import text


class _Text(str):
    """A string ``md`` does not memoise."""


_CHARS = st.sampled_from(["a", "Z", "9", "1.", "2)", " ", "  ", "-", "+", "|", "\\", "`", "*", "_", "[", "]", "<", ">",
                          "&", "#", "$", "~", "!", "\n", "\r\n", "\t", "\x00", "\x85", "\u2028", "\u200b", "\ufeff",
                          "\ud800", "é", "漢", "##[", "::"])


@settings(max_examples=600, deadline=None)
@given(st.lists(_CHARS, max_size=30).map("".join), st.sampled_from([None, 0, 1, 5, 12, 64]))
def test_memoised_md_is_md(value, limit):
    unmemoised = text.md(_Text(value), limit)
    assert text.md(value, limit) == unmemoised
    assert text.md(value, limit) == unmemoised  # from the memo now


def test_the_limit_is_part_of_what_is_remembered():
    value = "listIssues_with_a_long_name|x"
    assert text.md(value) == "listIssues\\_with\\_a\\_long\\_name\\|x"
    assert text.md(value, 8) == "listIss…"
    assert text.md(value, 12) == "listIssues\\_…"
    assert text.md(value) == "listIssues\\_with\\_a\\_long\\_name\\|x"


def test_long_text_is_escaped_the_same_and_not_kept():
    value = "- a|b " * 100
    before = text._md_text.cache_info().currsize
    assert text.md(value) == text.md(_Text(value)) and text.md(value).startswith("\\- a\\|b - a\\|b")
    assert text._md_text.cache_info().currsize == before
