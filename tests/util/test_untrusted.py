"""``harness.util.untrusted``: the one escaping path for untrusted text."""

from __future__ import annotations

import json
import random
import sys
import unicodedata

import pytest

from harness.core.canonical import stringify
from harness.core.jsparse import parse
from harness.util import untrusted
from tests.hostile import UNSAFE, assert_safe_output

ATTACKS = {
    "newline-command": ("x\n::error title=t::pwned", "x\\n::error title=t::pwned"),
    "cr-command": ("x\r::warning::pwned", "x\\r::warning::pwned"),
    "crlf": ("a\r\nb", "a\\r\\nb"),
    "tab": ("a\tb", "a\\tb"),
    "csi": ("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"),
    "osc0-title": ("\x1b]0;title\x07", "\\x1b]0;title\\x07"),
    "osc52-clipboard": ("\x1b]52;c;cHduZWQ=\x1b\\", "\\x1b]52;c;cHduZWQ=\\x1b\\"),
    "c1-csi": ("\x9b31m", "\\x9b31m"),
    "c1-nel": ("a\x85b", "a\\x85b"),
    "del": ("a\x7fb", "a\\x7fb"),
    "nul": ("a\x00b", "a\\x00b"),
    "bidi-override": ("\u202egnp.exe\u202c", "\\u202egnp.exe\\u202c"),
    "bidi-isolate": ("\u2066x\u2069 \u2067y\u2068", "\\u2066x\\u2069 \\u2067y\\u2068"),
    "marks": ("\u200e\u200f\u061c", "\\u200e\\u200f\\u061c"),
    "line-separator": ("a\u2028b\u2029c", "a\\u2028b\\u2029c"),
    "zero-width-space-bom": ("a\u200bb\ufeff", "a\\u200bb\\ufeff"),
    "tags": ("\U000e0041\U000e007f", "\\U000e0041\\U000e007f"),
    "lone-high": ("a\ud800b", "a\\ud800b"),
    "lone-low": ("\udfff", "\\udfff"),
    "legacy-command": ("x ##[error]pwned", "x #\\x23[error]pwned"),
    "legacy-twice": ("###[group]", "##\\x23[group]"),
}


@pytest.mark.parametrize("raw, shown", ATTACKS.values(), ids=ATTACKS.keys())
def test_escape_shows_every_attack_visibly(raw, shown):
    assert untrusted.escape(raw) == shown
    assert untrusted.line(raw) == shown
    assert_safe_output(untrusted.line(raw))
    untrusted.line(raw).encode("utf-8")  # never raises: no lone surrogate is left


def test_ordinary_text_is_unchanged():
    text = "Café-naïve ✓ — résumé 日本語 🚀 👨\u200d👩\u200d👧 ZWNJ\u200c; a::b ## [x] #[y] 50% \\n"
    assert untrusted.escape(text) == text
    assert untrusted.line(text) == text


@pytest.mark.parametrize("raw, shown", [
    ("::error::pwned", "\\x3a:error::pwned"),
    ("   ::warning::pwned", "   \\x3a:warning::pwned"),
    ("\u00a0\u3000\u2003::notice::pwned", "\u00a0\u3000\u2003\\x3a:notice::pwned"),  # the runner trims these
    ("\t::error::pwned", "\\t::error::pwned"),
    ("\n::error::pwned", "\\n::error::pwned"),
    (":: x", "\\x3a: x"),
    ("a ::error::", "a ::error::"),
])
def test_line_never_starts_with_a_workflow_command(raw, shown):
    assert untrusted.line(raw) == shown
    assert not untrusted.line(raw).lstrip().startswith("::")


def test_escape_and_line_are_idempotent():
    for raw, _ in ATTACKS.values():
        once = untrusted.line(raw)
        assert untrusted.line(once) == once and untrusted.escape(once) == once


def test_non_strings_are_converted():
    assert untrusted.escape(None) == "None" and untrusted.escape(12) == "12"
    assert untrusted.escape(b"\x1b") == "b'\\x1b'"
    assert untrusted.line(["::x"]) == "['::x']"


def test_spaces_folds_line_breaks_only():
    assert untrusted.escape("a\nb\r\nc\td\u2028e\x85f", spaces=True) == "a b  c d e f"
    assert untrusted.escape("a\n\x1b[2J", spaces=True) == "a \\x1b[2J"


def test_the_unsafe_set_is_every_control_format_separator_and_surrogate():
    """Every code point of categories Cc, Cf, Zl, Zp, Cs except ZWNJ/ZWJ is escaped, per this
    Python's Unicode tables; nothing else in the BMP's letters and symbols is touched."""
    wanted = {"Cc", "Cf", "Zl", "Zp", "Cs"}
    missing, extra = [], []
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        escaped = untrusted.escape(char) != char
        should = unicodedata.category(char) in wanted and char not in "\u200c\u200d"
        if should and not escaped:
            missing.append(f"U+{code:04X}")
        elif escaped and not should and unicodedata.category(char) != "Cn":
            extra.append(f"U+{code:04X}")
    assert not missing and not extra, (missing[:20], extra[:20])


def test_random_hostile_strings_never_raise_and_come_out_safe():
    alphabet = ["a", " ", ":", "#", "[", "\\", "%", "\n", "\r", "\t", "\x1b", "\x07", "\x9b", "\x7f", "\x00",
                "\u202e", "\u2066", "\u2028", "\u00a0", "\ud800", "\udc80", "\U000e0041", "é", "🚀"]
    rng = random.Random(9)
    for _ in range(3000):
        raw = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24)))
        line = untrusted.line(raw)
        line.encode("utf-8")
        assert_safe_output(line)
        assert "\n" not in line


@pytest.mark.parametrize("value", [
    {"name": "a\x7fb\x9b\u202e\u2028\u2029\ufeff", "d": "tag \U000e0041 🚀 é \ud800 \x1b", "c": "x ##[error]y"},
    ["\u0085", "\u00ad", "\u061c", "\u2066\u2069", "plain"],
])
def test_json_text_escapes_what_stringify_leaves_raw_and_parses_back_the_same(value):
    text = stringify(value, indent=2)
    safe = untrusted.json_text(text)
    assert UNSAFE.search(safe.replace("\n", "")) is None and "##[" not in safe
    assert parse(safe) == parse(text)
    assert stringify(parse(safe)) == stringify(value)  # the canonical form re-derives byte for byte
    assert json.loads(safe) == json.loads(text)
    assert untrusted.json_text(safe) == safe


def test_lines_keeps_the_harness_line_breaks_and_makes_each_line_safe():
    message = "error: 2 problems\nentry 'a\x9b': bad\n::error::pwned ##[group]"
    assert untrusted.lines(message) == "error: 2 problems\nentry 'a\\x9b': bad\n\\x3a:error::pwned #\\x23[group]"
    assert_safe_output(untrusted.lines(message))


def test_laid_out_breaks_a_leading_command_on_every_line_and_changes_nothing_else():
    from harness.util.untrusted import laid_out

    text = "table ─── \x1b[1mbold\x1b[0m\nxxxx\n::error::pwned   col\n  \u00a0::warning::x\nok :: fine"
    assert laid_out(text) == ("table ─── \x1b[1mbold\x1b[0m\nxxxx\n\\x3a:error::pwned   col\n  \u00a0\\x3a:warning::x\n"
                              "ok :: fine")
    assert laid_out(laid_out(text)) == laid_out(text)
