"""``site.link`` (harness/pages/site.py) gives exactly ``posixpath.relpath(to_file, dirname(from_file) or ".")``
(or raises what it raises): on the links pages make, and on any paths of names, ".", "..", empty parts,
doubled and leading slashes, where the file name is also a folder on the way between the two."""

from __future__ import annotations

import posixpath

from hypothesis import example, given, settings
from hypothesis import strategies as st

from harness.pages import site
from harness.util import published


def _relpath(from_file: str, to_file: str) -> str:
    try:
        return posixpath.relpath(to_file, posixpath.dirname(from_file) or ".")
    except ValueError as exc:
        return f"ValueError: {exc}"


def _link(from_file: str, to_file: str) -> str:
    try:
        return site.link(from_file, to_file)
    except ValueError as exc:
        return f"ValueError: {exc}"


_PARTS = st.sampled_from(["a", "b", "docs", "servers", "x.md", ".", "..", "", "..."])
_PATHS = st.builds(lambda lead, parts: lead + "/".join(parts), st.sampled_from(["", "/", "//"]),
                   st.lists(_PARTS, max_size=5))


@settings(max_examples=1000, deadline=None)
@given(_PATHS, _PATHS)
@example("docs/servers/x.md", "docs/servers")  # the target is the start folder itself
@example("docs/servers/a/x.md", "docs/servers")  # ... a folder above it
@example("docs/servers/a/x.md", "docs/b")  # a sibling of a folder above it
@example("a/b/c.md", "a/b/..")
@example("x.md", "")
def test_link_is_relpath(from_file, to_file):
    assert _link(from_file, to_file) == _relpath(from_file, to_file)


def test_the_links_pages_make():
    here = published.server_page("alpha")
    for to_file in (published.DASHBOARD, published.CALCULATOR, published.LEADERBOARD_MD, published.METHODOLOGY,
                    published.REGRESSIONS_MD, published.server_page("beta"), published.trend("alpha"),
                    published.sparkline("alpha"), published.server_page("alpha")):
        assert site.link(here, to_file) == _relpath(here, to_file)
    assert site.link(here, published.server_page("beta")) == "beta.md"
    assert site.link(here, published.trend("alpha")) == "../trends/alpha.svg"
