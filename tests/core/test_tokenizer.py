"""o200k_base provisioning (tiktoken, then npm, verified) and counting semantics."""

from __future__ import annotations

import hashlib
import random
import shutil
import time

import pytest
import tiktoken
import tiktoken.load
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core import counting
from harness.core import tokenizer as tk

KNOWN_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
KNOWN_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"


def _sha256(path) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


@pytest.fixture
def isolated(monkeypatch, tmp_path):
    """Empty caches for us and for tiktoken, tiktoken's in-memory registry cleared, and the
    module's per-process memo restored afterwards (provision(refresh=True) replaces it)."""
    monkeypatch.setenv(tk.CACHE_ENV, str(tmp_path / "ours"))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tiktoken-cache"))
    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})
    monkeypatch.setattr(tk, "_encoding", tk._encoding)
    monkeypatch.setattr(tk, "_provenance", tk._provenance)
    return tmp_path


@pytest.fixture
def no_download(monkeypatch):
    """tiktoken's download fails (its cache is the empty one from ``isolated``)."""

    def refuse(blobpath: str) -> bytes:
        if "://" in blobpath:
            raise ConnectionError(f"download blocked by test: {blobpath}")
        with open(blobpath, "rb") as f:
            return f.read()

    monkeypatch.setattr(tiktoken.load, "read_file", refuse)


@pytest.fixture
def no_npm(monkeypatch, tmp_path):
    """npm cannot fetch: a registry nobody listens on, no retries, an empty npm cache."""
    monkeypatch.setenv("npm_config_registry", "http://127.0.0.1:9/")
    monkeypatch.setenv("npm_config_fetch_retries", "0")
    monkeypatch.setenv("npm_config_cache", str(tmp_path / "npm-cache"))


@pytest.fixture
def load_spy(monkeypatch):
    """Records the SHA-256 of the cached file each time tiktoken is asked to load it."""
    seen: list[str] = []
    real = tk._load_via_tiktoken_cache

    def spy(directory):
        seen.append(_sha256(tk.cache_path()))
        return real(directory)

    monkeypatch.setattr(tk, "_load_via_tiktoken_cache", spy)
    return seen


def test_pinned_hash_and_url_are_read_from_tiktoken():
    assert tk.pinned() == (KNOWN_URL, KNOWN_SHA256)


def test_expand_bpe_ranks_format():
    assert tk.expand_bpe_ranks("! 0 QQ== Qg==\n! 5 Qw==\n") == b"QQ== 0\nQg== 1\nQw== 5\n"
    with pytest.raises(ValueError):
        tk.expand_bpe_ranks("! x QQ==")


@pytest.mark.slow
def test_provisions_from_npm_into_a_fresh_cache(isolated, no_download, load_spy):
    started = time.monotonic()
    prov = tk.provision(refresh=True)
    elapsed = time.monotonic() - started
    assert prov.source == "npm", prov
    assert f"tiktoken@{tk.NPM_VERSION}" in prov.description and "sha256 verified" in prov.description
    path = tk.cache_path()
    assert prov.path == str(path) and path.parent == isolated / "ours" / "tiktoken"
    assert _sha256(path) == KNOWN_SHA256
    assert load_spy == [KNOWN_SHA256]
    assert tk.count("hello world") == 2
    print(f"npm provisioning took {elapsed:.2f}s")
    # A second process-level provisioning uses the verified cache: no network at all.
    again = tk.provision(refresh=True)
    assert again.source == "cache" and _sha256(path) == KNOWN_SHA256


@pytest.mark.slow
def test_tampered_cache_is_rejected_and_rederived(isolated, no_download, load_spy):
    path = tk.cache_path()
    path.parent.mkdir(parents=True)
    path.write_bytes(b"IQ== 0\n")  # a well-formed but wrong rank file
    prov = tk.provision(refresh=True)
    assert prov.source == "npm"  # not "cache": the tampered file was not used
    assert _sha256(path) == KNOWN_SHA256
    assert load_spy == [KNOWN_SHA256]  # tiktoken only ever saw the verified file


def test_tampered_cache_is_never_loaded_even_when_nothing_replaces_it(
        isolated, no_download, no_npm, load_spy):
    path = tk.cache_path()
    path.parent.mkdir(parents=True)
    path.write_bytes(b"IQ== 0\n")
    with pytest.raises(tk.TokenizerUnavailable):
        tk.provision(refresh=True)
    assert load_spy == []
    assert not path.exists()


def test_verified_cache_works_offline(isolated, no_download, no_npm, monkeypatch):
    good = tk._provenance.path if tk._provenance else None
    if good is None:  # make sure this process has a verified file somewhere
        good = tk.provision().path
    if good is None or _sha256(good) != KNOWN_SHA256:
        pytest.skip("no verified o200k_base file on disk to copy")
    tk.cache_path().parent.mkdir(parents=True)
    shutil.copyfile(good, tk.cache_path())
    monkeypatch.setattr(tiktoken.load, "read_file_cached", lambda *a, **k: pytest.fail("hashed a second time"))
    prov = tk.provision(refresh=True)
    assert prov.source == "cache"
    assert tk.count("hello world") == 2


@pytest.mark.slow
def test_the_encoding_built_from_verified_bytes_is_tiktokens_own(isolated):
    good = tk.provision().path
    if good is None or _sha256(good) != KNOWN_SHA256:
        pytest.skip("no verified o200k_base file on disk")
    data = open(good, "rb").read()
    ours = tk._load_verified(data, KNOWN_URL, KNOWN_SHA256)
    theirs = tk._load_via_tiktoken_cache(tk.Path(good).parent)
    assert (ours.name, ours._pat_str, ours._special_tokens) == (theirs.name, theirs._pat_str, theirs._special_tokens)
    assert ours._mergeable_ranks == theirs._mergeable_ranks
    with pytest.raises(ValueError):
        tk._load_verified(data, KNOWN_URL, "0" * 64)
    with pytest.raises(ValueError):  # a line of three words: never paired with the next line's
        tk._load_verified(b"YQ== 0 1\nYg== 1\n", KNOWN_URL, KNOWN_SHA256)


@pytest.mark.parametrize("npm_on_path", [True, False], ids=["bogus-registry", "no-npm-on-path"])
def test_both_sources_failing_raise_one_message_naming_both(
        isolated, no_download, no_npm, monkeypatch, npm_on_path):
    if not npm_on_path:
        monkeypatch.setenv("PATH", str(isolated / "empty-bin"))
    with pytest.raises(tk.TokenizerUnavailable) as info:
        tk.provision(refresh=True)
    msg = str(info.value)
    assert "\n" not in msg
    assert "Source 1, tiktoken" in msg and KNOWN_URL in msg and "download blocked by test" in msg
    assert f"Source 2, npm package tiktoken@{tk.NPM_VERSION}" in msg
    assert ("npm pack" in msg) if npm_on_path else ("no npm on PATH" in msg and "127.0.0.1:9" in msg)
    assert not tk.cache_path().exists()


def test_special_token_text_is_ordinary_text():
    enc = tk.get_encoding()
    assert tk.count("<|endoftext|>") > 1
    assert tk.count("<|endoftext|>") == len(enc.encode("<|endoftext|>", disallowed_special=()))
    assert tk.encoding_name() == "o200k_base"


def test_lone_surrogates_count_as_tiktoken_does():
    enc = tk.get_encoding()
    for text in ("a\ud800b", "x\udc00", "\ud83d", "\ud83d\ude00", "ok \udfff\ud800 end"):
        assert tk.count(text) == len(enc.encode_ordinary(text))
    assert tk.count("a\ud800b") == tk.count("a\ufffdb") == 3


def test_main_prints_the_source(capsys):
    assert tk.main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("o200k_base: ") and "verified" in out


def test_count_many_matches_count_on_the_threaded_path(monkeypatch):
    monkeypatch.setenv(counting.THREADS_ENV, "3")
    rnd = random.Random(7)
    words = ["tool", "schema", '"type":"object"', "ünïcode", "12345", "  ", "\n", "日本語", "🚀"]
    texts = [" ".join(rnd.choice(words) for _ in range(rnd.randint(0, 4000))) for _ in range(9)]
    assert sum(map(len, texts)) >= counting.PARALLEL_MIN_CHARS
    assert counting.count_many(texts) == [tk.count(t) for t in texts]
    assert counting.count_many([]) == []


# count_spans is exact by a property of the o200k pre-tokenizer (see the comment above it); test it
# against direct counting on text dense with the characters that matter at the cut points.
_ALPHABET = st.sampled_from(list('abcXYZ019"\',:}]{[ \n\t/\\_-.') + ["é", "\u0301", "ß", "日", "٣",
                                                                    "\u0085", "\u00a0", "🙂"])


@settings(max_examples=300, deadline=None)
@given(st.lists(_ALPHABET, min_size=0, max_size=120).map("".join), st.data())
def test_count_spans_equals_direct_counts(text, data):
    n = len(text)
    cuts = data.draw(st.lists(st.tuples(st.integers(0, n), st.integers(0, n)).map(sorted)
                              .map(tuple), max_size=6))
    total, counts = counting.count_spans(text, cuts)
    assert total == tk.count(text)
    assert counts == [tk.count(text[s:t]) for s, t in cuts]


def test_count_spans_counts_directly_for_an_unknown_pattern(monkeypatch):
    monkeypatch.setattr(counting, "_O200K_PAT", "not the pattern")
    text = '{"name":"a, b: c","x":[1,2]}'
    assert counting.count_spans(text, [(0, len(text)), (9, 16)]) == (
        tk.count(text), [tk.count(text), tk.count(text[9:16])])


def test_count_spans_rejects_spans_outside_the_text():
    with pytest.raises(ValueError):
        counting.count_spans("abc", [(2, 5)])
