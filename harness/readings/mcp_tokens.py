"""sd2k/mcp-tokens at a pinned release, the counter behind ``cross-check``: ``provision``, ``run``.

Not runnable until ``ASSET_SHA256`` is pinned (every run is refused); kept small, not to be grown.

docs/METHODOLOGY.md, "CLI cross-check".
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import shutil
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from harness.core.jsparse import WireJSONError, parse
from harness.probe import server_env, process, sandbox
from harness.probe.launch import isolated_argv
from harness.probe.target import Target
from harness.probe.workdir import prepare_workdir
from harness.util import bounded

NAME = "sd2k/mcp-tokens"
RELEASE = "v0.2.1"
ASSET = "mcp-tokens-x86_64-unknown-linux-gnu.tar.xz"
# The SHA-256 of ASSET as published with RELEASE; None until it is read from the release, and every
# run is refused until then.
ASSET_SHA256: str | None = None
BINARY = "mcp-tokens"
ARGS = ("analyze", "--provider", "tiktoken", "--model", "gpt-4o", "--format", "json")
DOCKER_MOUNT = "/opt/mcp-tokens/mcp-tokens"
DOWNLOAD_SECONDS = 30.0
REPORT_LIMIT = 16 * 1024 * 1024
MAX_ASSET_BYTES = 64 * 1024 * 1024  # the v0.2.1 Linux archive is a few MiB


class Unavailable(RuntimeError):
    """The pinned CLI cannot be used here; the message names it and says why."""


def asset_url() -> str:
    return f"https://github.com/{NAME}/releases/download/{RELEASE}/{ASSET}"


def label() -> str:
    return f"{NAME} {RELEASE}"


def provision(asset: Path | None, workdir: Path, expected_sha256: str | None = ASSET_SHA256) -> Path:
    """The verified binary, extracted under ``workdir`` from ``asset`` (``None``: download it). Raises
    :class:`Unavailable`."""
    archive = Path(asset) if asset is not None else _download(workdir)
    if not archive.is_file():
        raise Unavailable(f"{label()} cannot be obtained: no release asset at {archive}")
    if expected_sha256 is None:
        raise Unavailable(f"{label()}: no SHA-256 is pinned for {ASSET} (harness/readings/mcp_tokens.py); "
                          "refusing to run an unverified binary")
    digest = _digest(archive)
    if digest != expected_sha256:
        raise Unavailable(f"{label()}: {archive.name} has SHA-256 {digest}, not the pinned {expected_sha256}; "
                          "refusing to run it")
    return _extract(archive, workdir)


def _digest(archive: Path) -> str:
    digest, total = hashlib.sha256(), 0
    try:
        with open(archive, "rb") as handle:
            while chunk := handle.read(1 << 20):
                total += len(chunk)
                if total > MAX_ASSET_BYTES:
                    raise Unavailable(f"{label()}: {archive.name} is larger than {MAX_ASSET_BYTES:,} bytes; "
                                      "it is not the release asset, refusing to run it")
                digest.update(chunk)
    except OSError as exc:
        raise Unavailable(f"{label()}: cannot read {archive.name}: {exc.strerror or exc}") from None
    return digest.hexdigest()


def _download(workdir: Path) -> Path:
    target = workdir / ASSET
    try:
        data = bounded.fetch(asset_url(), DOWNLOAD_SECONDS, MAX_ASSET_BYTES)
    except (OSError, bounded.TooLarge) as exc:
        reason = _reason(exc)
        raise Unavailable(f"{label()} cannot be obtained here: {asset_url()}: {reason}") from None
    target.write_bytes(data)
    return target


def _reason(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    if not isinstance(exc, OSError) or type(exc) is not OSError:  # TooLarge, DeadlineExceeded: already one line
        return text
    cause = re.search(r"Caused by (\w+)", text) or re.search(r"^(\d{3} [\w ]+: [\w ]+?) for url", text)
    return cause.group(1) if cause else text[:200]


def _extract(archive: Path, workdir: Path) -> Path:
    try:
        with tarfile.open(archive) as tar:
            members = [m for m in tar.getmembers() if m.isfile() and Path(m.name).name == BINARY]
            if len(members) != 1:
                raise Unavailable(f"{label()}: {archive.name} holds {len(members)} '{BINARY}' files, expected one")
            source = tar.extractfile(members[0])
            assert source is not None  # a regular file member always extracts
            out = workdir / "bin" / BINARY
            out.parent.mkdir(parents=True, exist_ok=True)
            with open(out, "wb") as handle:
                shutil.copyfileobj(source, handle)
    except (tarfile.TarError, OSError) as exc:
        raise Unavailable(f"{label()}: cannot unpack {archive.name}: {exc}") from None
    out.chmod(0o500)
    return out


@dataclass(frozen=True)
class Report:
    """What the CLI printed: tools total, whole total, tool names, counter."""

    tools_tokens: int
    total_tokens: int
    tool_names: tuple[str, ...]
    provider: str
    model: str


def parse_report(text: str) -> Report:
    """Read the CLI's JSON report. Raises ``ValueError`` naming what is missing."""
    try:
        doc = parse(text)
    except WireJSONError as exc:
        raise ValueError(f"not JSON: {exc}") from None
    tools = doc.get("tools") if isinstance(doc, dict) else None
    items = tools.get("items") if isinstance(tools, dict) else None
    counter = doc.get("counter") if isinstance(doc, dict) else None
    if not (isinstance(doc, dict) and isinstance(tools, dict) and isinstance(items, list)
            and isinstance(counter, dict)):
        raise ValueError("no tools.items array or counter object in the report")
    whole = lambda v: isinstance(v, float) and v.is_integer() and v >= 0  # noqa: E731
    if not whole(tools.get("total")) or not whole(doc.get("total_tokens")):
        raise ValueError("tools.total or total_tokens is not a whole number")
    names = tuple(str(i.get("name")) for i in items if isinstance(i, dict))
    return Report(int(tools["total"]), int(doc["total_tokens"]), names,
                  str(counter.get("provider")), str(counter.get("model")))


def argv_for(binary: Path, target: Target, isolation: str, cwd: Path,
             env: dict) -> tuple[list[str], dict, tuple[int, ...]]:
    """The CLI's argv, env and inherited descriptors for ``target`` in ``isolation``. Raises
    ``process.SpawnError``."""
    server = process.split_command(target.command or "")
    timeout = ["--timeout", str(int(target.timeout_seconds))]
    if isolation == "docker":
        image = sandbox.docker_image_for(server[0])
        argv = sandbox.docker_argv([DOCKER_MOUNT, *ARGS, *timeout, "--", *server], list(target.env), image)
        at = argv.index(image)
        return argv[:at] + ["-v", f"{binary}:{DOCKER_MOUNT}:ro"] + argv[at:], env, ()
    argv = [str(binary), *ARGS, *timeout, "--", *server]
    if isolation != "sandbox":
        return argv, env, ()
    wrapped, launcher_env, fds = isolated_argv(argv, env, cwd, "sandbox", target)
    at = wrapped.index("--")  # bind the binary's folder read-only before the command starts
    return wrapped[:at] + ["--ro-bind", str(binary.parent), str(binary.parent)] + wrapped[at:], launcher_env, fds


async def run(binary: Path, target: Target, isolation: str, budget: float) -> Report:
    """Launch the CLI against ``target`` once; its report, or ``ValueError``."""
    env = server_env.child_env(target.env, pass_declared_values=False)
    env.update(target.set_env)
    env = {k: v for k, v in env.items() if not k.startswith(("ANTHROPIC_", "MCP_TOKENS_"))}
    with tempfile.TemporaryDirectory(prefix="mcp-context-cost-cli-") as tmp:
        cwd = Path(target.cwd) if target.cwd else Path(tmp)
        prepare_workdir(cwd, needs_git=target.needs_git and not target.cwd)
        fds: tuple[int, ...] = ()
        try:
            argv, env, fds = argv_for(binary, target, isolation, cwd, env)
            proc = await process.spawn(argv, env, cwd, stream_limit=2**16, pass_fds=fds)
        except process.SpawnError as exc:
            raise ValueError(str(exc)) from None
        finally:
            for fd in fds:
                os.close(fd)
        try:
            async with asyncio.timeout(budget):
                out, err = await proc.communicate(b"")
        except TimeoutError:
            raise ValueError(f"no report within {budget:g} s") from None
        finally:
            await process.terminate(proc)
    if proc.returncode != 0:
        tail = err.decode("utf-8", errors="replace").strip().splitlines()[-1:] or ["no stderr"]
        raise ValueError(f"exited with code {proc.returncode}: {tail[0][:300]}")
    if len(out) > REPORT_LIMIT:
        raise ValueError(f"report larger than {REPORT_LIMIT} bytes")
    return parse_report(out.decode("utf-8", errors="replace"))

