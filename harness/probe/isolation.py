"""What machine and runtimes a measurement ran under, recorded in every record (``isolation``).

The spec's "Which machine a number applies to": a number is a claim about the machine that made
it, so the record carries the mode, the architecture and the versions of the runtimes a launcher
resolves packages with (npx on node 20 resolves older releases than on node 22).
"""

from __future__ import annotations

import functools
import platform
import shutil
import subprocess

from harness.probe import environment

RUNTIMES = {"node": ["node", "--version"], "npm": ["npm", "--version"],
            "python": ["python3", "--version"], "uv": ["uv", "--version"]}


@functools.lru_cache(maxsize=None)
def runtime_versions() -> dict[str, str | None]:
    """Versions printed by each runtime found on the child PATH; ``None`` when absent."""
    env = environment.child_env()
    versions: dict[str, str | None] = {}
    for name, argv in RUNTIMES.items():
        found = shutil.which(argv[0], path=env["PATH"])
        versions[name] = _version(found, argv[1:], env) if found else None
    return versions


def _version(program: str, args: list[str], env: dict) -> str | None:
    try:
        done = subprocess.run([program, *args], capture_output=True, text=True, timeout=20, env=env)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (done.stdout or done.stderr).strip().splitlines()
    return text[0].removeprefix("Python ").removeprefix("uv ").split(" ")[0] if text else None


def describe(mode: str = "host", image: str | None = None, network: str = "host", note: str | None = None) -> dict:
    """The ``isolation`` object of a record: mode, os, arch, image, network, runtimes, note."""
    return {
        "mode": mode,
        "os": platform.system().lower(),
        "arch": platform.machine(),
        "image": image,
        "network": network,
        "runtimes": runtime_versions(),
        "note": note,
    }
