"""Which strict clients would reject what a server sent, judged by the official schema and the Python SDK's
types: the record's ``compatibility``. docs/METHODOLOGY.md, "Compatibility with strict clients".
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.metadata
import importlib.resources
import itertools
import json
import os
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Protocol

from harness.probe import redact
from harness.util import atomic, user_cache
from harness.probe.outcome import Capture

TYPESCRIPT = "typescript-sdk"
PYTHON = "python-sdk"
CLIENTS_ALL = (TYPESCRIPT, PYTHON)
CLIENTS = {TYPESCRIPT: "Claude Code and other TypeScript-SDK clients", PYTHON: "Python-SDK clients"}
SCHEMA_REVISION = "2025-11-25"
MAX_FINDINGS = 20
MAX_CHECKED_TOOLS = 2000
MAX_CHECKED_DEPTH = 100
MAX_CHECKED_BYTES = 1024 * 1024  # of JSON, per launch: the largest real capture is ~200 KB
MAX_SCHEMA_ERRORS = 100  # the schema's errors weighed to name the most relevant one
_MODELS = {"initialize": "InitializeResult", "tools/list": "ListToolsResult"}


@dataclass(frozen=True)
class Finding:
    """One thing a strict client would not accept, and the client families that stop there."""

    what: str
    rejected_by: tuple[str, ...] = ()

    def to_record(self) -> dict:
        return {"what": self.what, "rejectedBy": list(self.rejected_by)}


class _HasFindings(Protocol):
    compatibility: list


def add(capture: _HasFindings, finding: Finding) -> None:
    """Add ``finding`` to ``capture.compatibility`` once (at most ``MAX_FINDINGS``)."""
    if finding not in capture.compatibility and len(capture.compatibility) < MAX_FINDINGS:
        capture.compatibility.append(finding)


@dataclass
class _Found:
    compatibility: list = field(default_factory=list)
    checked_tools: int = 0
    checked_bytes: int = 0


def findings(capture: Capture) -> list[Finding]:
    """Every finding for a finished ``capture``, checked after the launch."""
    found = _Found()
    for method, page, result in capture.results:
        check_result(found, method, result, page)
    for finding in capture.compatibility:
        add(found, finding)
    return found.compatibility


def check_result(capture: _Found, method: str, result: dict, page: int | None = None) -> None:
    """Validate one ``initialize`` or ``tools/list`` result against both references, adding findings."""
    where = method if page is None else f"page {page} of {method}"
    checked = _bounded(result, MAX_CHECKED_TOOLS - capture.checked_tools)
    if checked is not None and _deeper_than(checked, MAX_CHECKED_DEPTH):
        add(capture, Finding(f"{where} nests deeper than {MAX_CHECKED_DEPTH} levels and was not checked against "
                             "either client's types"))
        return
    if checked is not None:
        checked, size = _within_bytes(checked, MAX_CHECKED_BYTES - capture.checked_bytes)
        capture.checked_bytes += size
    if checked is not result:
        add(capture, Finding(f"{method} was checked against both clients' types only in part: the check reads at most "
                             f"{MAX_CHECKED_TOOLS} tools and {MAX_CHECKED_BYTES} bytes of JSON per launch"))
    if checked is None:
        return
    tools = checked.get("tools")
    capture.checked_tools += len(tools) if isinstance(tools, list) else 0
    key = _verdict_key(method, checked)
    if key is not None and _passed(key):
        return
    schema_error = _schema_error(_MODELS[method], checked)
    if schema_error:
        add(capture, Finding(f"{where} does not match the MCP {SCHEMA_REVISION} schema: {schema_error}", (TYPESCRIPT,)))
    model_error = _model_error(_MODELS[method], checked)
    if model_error:
        add(capture, Finding(f"{where} is refused by the Python SDK's mcp.types.{_MODELS[method]}: {model_error}",
                             (PYTHON,)))
    if key is not None and not schema_error and not model_error:
        _remember(key)


# --- results both references accepted, kept by content ----------------------------------------------
# A result both the schema and the SDK's types accepted is kept as a pass, keyed by the sha256 of its exact JSON,
# its method, this module's source, the schema file and the versions of every package that judged it: the same
# bytes judged by the same references again are not judged again. An entry is a regular file holding exactly
# ``passed <key>``; anything else there is a miss. A refusal is never kept: it is judged every time.

VERDICTS_DIR = "compatibility-passed"  # under the harness's cache folder
MAX_VERDICTS = 4096  # entries kept; the older half is dropped past it
_JUDGES = ("mcp", "mcp-types", "pydantic", "pydantic-core", "jsonschema")


def _verdicts() -> Path:
    return user_cache.folder(VERDICTS_DIR)


@functools.lru_cache(maxsize=1)
def _code_key() -> str:
    digest = hashlib.sha256(Path(__file__).read_bytes())
    digest.update((importlib.resources.files("harness.probe") / "data" / f"mcp-{SCHEMA_REVISION}.schema.json")
                  .read_bytes())
    for name in _JUDGES:
        try:
            version = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            version = "-"
        digest.update(f"\0{name}={version}".encode())
    digest.update(f"\0python={sys.version_info[0]}.{sys.version_info[1]}".encode())
    return digest.hexdigest()


def _verdict_key(method: str, value: dict) -> str | None:
    try:
        data = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
    except (ValueError, TypeError, RecursionError):
        return None
    return hashlib.sha256(f"{_code_key()}\0{method}\0".encode() + data).hexdigest()


def _entry(key: str) -> bytes:
    return f"passed {key}\n".encode("ascii")


def _passed(key: str) -> bool:
    """Whether ``key``'s entry is a regular file (no link followed, no fifo waited on) holding its pass."""
    try:
        fd = os.open(_verdicts() / key, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        return stat.S_ISREG(os.fstat(fd).st_mode) and os.read(fd, len(_entry(key)) + 1) == _entry(key)
    except OSError:
        return False
    finally:
        os.close(fd)


def _remember(key: str) -> None:
    folder = _verdicts()
    with contextlib.suppress(OSError):
        folder.mkdir(parents=True, exist_ok=True)
        names = os.listdir(folder)
        if len(names) >= MAX_VERDICTS:
            aged = sorted(names, key=lambda name: _mtime(folder / name))
            for name in aged[:len(aged) // 2]:
                with contextlib.suppress(OSError):
                    os.unlink(folder / name)
        atomic.write_bytes(folder / key, _entry(key), mode=0o644)


def _mtime(path: Path) -> float:
    try:
        return path.lstat().st_mtime
    except OSError:
        return 0.0


def to_record(findings: list[Finding]) -> dict:
    """The record's ``compatibility`` object: references, findings and the one-line summary."""
    return {
        "checkedAgainst": f"MCP {SCHEMA_REVISION} schema (TypeScript SDK clients); mcp.types of the Python SDK "
                          f"{_sdk_version()}",
        "findings": [f.to_record() for f in findings],
        "summary": summary(findings),
    }


def summary(findings: list[Finding]) -> str:
    """One line: which strict clients would reject what this server sends, and the first reason."""
    rejecting = [c for c in CLIENTS if any(c in f.rejected_by for f in findings)]
    if not rejecting:
        if findings:
            return "no strict client rejects what this server sends; the harness noted: " + findings[0].what
        return "no strict client rejects what this server sends"
    parts = []
    for client in rejecting:
        first = next(f for f in findings if client in f.rejected_by)
        parts.append(f"{CLIENTS[client]} would reject it ({first.what})")
    return "; ".join(parts)


def _bounded(result: dict, room: int) -> dict | None:
    tools = result.get("tools")
    if not isinstance(tools, list) or len(tools) <= room:
        return result
    return {**result, "tools": tools[:room]} if room > 0 else None


def _within_bytes(result: dict, room: int) -> tuple[dict | None, int]:
    """``result`` cut to the tools that fit in ``room`` bytes, and the bytes kept."""
    tools = result.get("tools")
    rest = {k: v for k, v in result.items() if k != "tools"}
    size = _size(rest)
    if size > room:
        return None, 0
    if not isinstance(tools, list):
        return result, size
    kept = 0
    for tool in tools:
        grown = size + _size(tool) + 1
        if grown > room:
            break
        size, kept = grown, kept + 1
    return (result if kept == len(tools) else {**result, "tools": tools[:kept]}), size


def _size(value: object) -> int:
    try:
        return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass"))
    except (ValueError, RecursionError):  # not reached after the depth check; never a crash if it is
        return MAX_CHECKED_BYTES + 1


def _deeper_than(value: object, limit: int) -> bool:
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return False


@functools.lru_cache(maxsize=None)
def _validator(definition: str):
    import jsonschema  # loaded after the launch, never on its deadline

    text = (importlib.resources.files("harness.probe") / "data" / f"mcp-{SCHEMA_REVISION}.schema.json").read_text(
        encoding="utf-8")
    schema = json.loads(text)
    return jsonschema.Draft202012Validator({"$ref": f"#/$defs/{definition}", "$defs": schema["$defs"]})


def _schema_error(definition: str, value: dict) -> str | None:
    import jsonschema.exceptions  # loaded after the launch, as in _validator

    try:
        errors = itertools.islice(_validator(definition).iter_errors(value), MAX_SCHEMA_ERRORS)
        error = jsonschema.exceptions.best_match(errors)
    except (RecursionError, MemoryError, ValueError) as exc:  # bounded above; a bug here must not end a run
        return redact.cut(f"could not be checked ({type(exc).__name__})", 160)
    if error is None:
        return None
    return f"{_path(error.absolute_path)} {_expected(error)}"


def _expected(error) -> str:
    rule, wanted = error.validator, error.validator_value
    if rule == "type":
        return f"must be of type {wanted}" if isinstance(wanted, str) else f"must be one of the types {wanted}"
    if rule == "const":
        return f"must be {json.dumps(wanted)}"
    if rule == "required":
        missing = [name for name in wanted if isinstance(error.instance, dict) and name not in error.instance]
        return f"lacks the required member {', '.join(missing) or wanted}"
    if rule == "enum":
        return f"must be one of {json.dumps(wanted)[:120]}"
    return f"fails the schema's {rule!r} rule"


def prepare() -> None:
    """Ahead of the first check: the key of kept passes, and both references (the schema's validators, the SDK's
    types) unless a pass has been kept here before (then they load on the first result not kept)."""
    _code_key()
    with contextlib.suppress(OSError), os.scandir(_verdicts()) as kept:
        if any(kept):
            return
    for definition in _MODELS.values():
        _validator(definition)
    _sdk_types()


@functools.lru_cache(maxsize=1)
def _sdk_types() -> ModuleType:
    """The SDK's types: ``mcp_types`` (SDK 2.x; ``mcp.types`` re-exports it, every name the same
    object) spares importing the SDK's client and server stack; SDK 1.x has ``mcp.types`` alone."""
    try:
        return importlib.import_module("mcp_types")  # heavy (hundreds of pydantic models): on first use only
    except ImportError:
        return importlib.import_module("mcp.types")


def _model_error(name: str, value: dict) -> str | None:
    import pydantic  # loaded after the launch, with the SDK's types

    try:
        getattr(_sdk_types(), name).model_validate(value)
    except pydantic.ValidationError as exc:
        first = exc.errors(include_input=False, include_url=False)[0]
        return f"{_path(first.get('loc', ()))} {redact.cut(str(first.get('msg', '')), 160)}"
    except Exception as exc:  # noqa: BLE001 - the SDK choking on hostile input is itself a finding
        return redact.cut(f"{type(exc).__name__}: {exc}", 160)
    return None


def _path(parts) -> str:
    text = "result"
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else f".{redact.cut(str(part), 40)}"
    return text


@functools.lru_cache(maxsize=1)
def _sdk_version() -> str:
    try:
        return importlib.metadata.version("mcp")
    except importlib.metadata.PackageNotFoundError:
        return "(not installed)"
