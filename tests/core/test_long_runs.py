"""Counting texts tiktoken's regex engine cannot take whole (long blank runs) stays exact.

Two oracles: tiktoken's own ``encode_ordinary`` on texts short enough for it, with the cutting
forced at every run of two blanks or more (so the cutting rule itself is what is checked); and,
at the hostile sizes, node's ``JSON.stringify`` with node's regex engine cutting the canonical
string by the o200k_base pattern, each piece then given to BPE whole.
"""

from __future__ import annotations

import base64
import json
import random
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core import tokenizer as tk
from harness.core.counting import count_tools

NODE_PIECES = Path(__file__).with_name("node_pieces.js")
BLANKS = [" ", "\t", "\u3000", "\u00a0", "\u2003", "\u202f", "\x0b", "\x0c"]
ALPHABET = BLANKS + ["\n", "\r", "a", "Z", "é", "中", "7", "!", "/", "'", "s", "\"", ",", "}"]


@pytest.mark.slow
@given(st.lists(st.sampled_from(ALPHABET), max_size=60).map("".join))
@settings(max_examples=3000, deadline=None)
def test_cutting_at_every_run_equals_the_whole(text: str) -> None:
    enc = tk.get_encoding()
    assert tk.length(enc, text, run=2) == len(enc.encode_ordinary(text))


@pytest.mark.parametrize("seed", range(5))
def test_cutting_long_mixed_texts_equals_the_whole(seed: int) -> None:
    rng = random.Random(seed)
    parts = []
    for _ in range(400):
        unit = rng.choice(ALPHABET)
        parts.append(unit * rng.choice([1, 1, 2, 3, 50, 300]))
    text = "".join(parts)
    enc = tk.get_encoding()
    assert tk.length(enc, text, run=2) == len(enc.encode_ordinary(text))
    assert tk.length(enc, text, run=40) == len(enc.encode_ordinary(text))


class _NodePieces:
    def __init__(self) -> None:
        node = shutil.which("node")
        assert node, "node is the oracle here"
        self.proc = subprocess.Popen([node, str(NODE_PIECES)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE)

    def ask(self, wire: str) -> tuple[str, list[int]]:
        self.proc.stdin.write(base64.b64encode(wire.encode()) + b"\n")
        self.proc.stdin.flush()
        status, _, payload = self.proc.stdout.readline().decode().strip().partition(" ")
        assert status == "ok", base64.b64decode(payload).decode()
        canonical, lengths = json.loads(base64.b64decode(payload).decode())
        return canonical, lengths

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


@pytest.fixture(scope="module")
def node_pieces():
    oracle = _NodePieces()
    yield oracle
    oracle.close()


@lru_cache(maxsize=None)
def _bpe(piece: str) -> int:
    return len(tk.get_encoding()._encode_single_piece(piece.encode("utf-8")))


def _oracle_count(node_pieces: _NodePieces, wire: str) -> tuple[str, int]:
    canonical, lengths = node_pieces.ask(wire)
    total, at = 0, 0
    for n in lengths:  # lengths are UTF-16 units; the hostile texts here are all in the BMP
        total += _bpe(canonical[at:at + n])
        at += n
    assert at == len(canonical)
    return canonical, total


N = 1_000_000
HOSTILE = {
    "spaces": " " * N,
    "ideographic-space": "\u3000" * N,
    "no-break-space": "\u00a0" * N,
    "tabs": "\t" * N,
    "em-space": "\u2003" * N,
    "spaces-then-letter": " " * N + "x",
    "spaces-then-punctuation": " " * N + "!",
    "newline-then-spaces": "\n" + " " * N + "y",
    "spaces-then-newline": " " * N + "\n",
    "newlines": "\n" * N,
    "digits": "7" * N,
    "letters": "a" * N,
    "capitals": "A" * N,
    "mixed-blanks": " \t\u00a0\u3000" * (N // 4),
    "blank-runs-between-words": ("word" + " " * 5000 + "\u3000" * 5000) * 60,
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_descriptions_match_node(name: str, node_pieces: _NodePieces) -> None:
    tools = [{"name": "t", "description": HOSTILE[name], "inputSchema": {"type": "object"}}]
    canonical, expected = _oracle_count(node_pieces, json.dumps(tools))
    counted = count_tools(tools)
    assert counted.canonicalLength == len(canonical.encode("utf-8"))
    assert counted.totalTokens == expected


def test_a_tiktoken_failure_is_uncountable_not_a_panic(monkeypatch) -> None:
    enc = tk.get_encoding()

    class Panic(BaseException):  # what pyo3 raises for a Rust panic: not an Exception
        pass

    class Exploding:
        def encode_ordinary(self, text: str) -> list[int]:
            raise Panic("called `Result::unwrap()` on an `Err` value: RuntimeError(StackOverflow)")

        _encode_single_piece = enc._encode_single_piece

    with pytest.raises(tk.Uncountable, match="StackOverflow"):
        tk.length(Exploding(), "x" * 10)
