"""A token's UTF-8 length as composition finds it (harness/pages/composition.py, ``_size_of``) is the length
of its bytes under the encoding, found or remembered; the composition of real captures, and of one with
text of several bytes a character, still sums exactly to its headline."""

from __future__ import annotations

import json

from harness.core.canonical import stringify
from harness.core.tokenizer import get_encoding
from harness.pages import composition
from tests.conftest import REPO


def _records() -> list[dict]:
    paths = sorted((REPO / "results").glob("*/measurement.json"))[:12]
    return [json.loads(path.read_text(encoding="utf-8")) for path in paths]


def test_each_token_size_is_its_byte_length():
    enc = get_encoding()
    size = composition._size_of(enc)
    text = "".join(stringify(r.get("rawToolsCapture")) or "" for r in _records()[:3]) + " é漢字🙂\u200b \ud7ff"
    tokens = enc.encode_ordinary(text)
    assert len(set(tokens)) > 100
    for _ in range(2):  # found, then remembered
        assert [size(t) for t in tokens] == [len(enc.decode_single_token_bytes(t)) for t in tokens]


def test_real_compositions_sum_to_their_headline():
    records = [r for r in _records() if isinstance(r.get("totalTokens"), int)]
    assert len(records) > 5
    for record in records + [{"totalTokens": None, "rawToolsCapture": [{"name": "漢字🙂", "description": "é" * 50}]}]:
        capture = record["rawToolsCapture"]
        comp = composition.compose(capture, record["totalTokens"])
        assert comp is not None
        assert sum(t.tokens for t in comp.tools) + comp.punctuation == comp.total
        assert comp.total == len(get_encoding().encode_ordinary(stringify(capture)))
