"""A Node.js engine requirement (a package's ``engines.node``, npm's EBADENGINE words) against this
machine's Node: whether it is met here, whether any released Node could meet it.
"""

from __future__ import annotations

import datetime as dt
import re
import subprocess

from harness.probe import isolation

MAX_CHARS = 300  # the longest evidence line
# npm's engine check, as its install output and debug log print it: the package's declared Node
# range against this machine's (``required: { node: '>=22' }`` … ``current: { node: 'v20.20.2' …``).
ENGINE_NODE = re.compile(r"EBADENGINE.*?required:\s*\{[^}]*?node:\s*'([^']+)'.*?current:\s*\{[^}]*?node:\s*'([^']+)'",
                         re.DOTALL)
ENGINE_LINE = re.compile(r"(?:requires|required:?)\s+node(?:\.js)?\s*(?:version\s*)?[>=^~]+\s*v?\d", re.IGNORECASE)


def engine_line(text: str) -> str | None:
    """One sentence for a Node engine requirement this machine does not meet, or ``None``."""
    found = ENGINE_NODE.search(text)
    if found and below(found.group(1), node_version()):  # checked here: the text's "current" is only words
        package = re.search(r"package:\s*'([^']+)'", text[found.start():found.end()])
        name = f"{package.group(1)} " if package else ""
        return f"npm EBADENGINE: {name}requires node {found.group(1)}; this machine has {found.group(2)}"[:MAX_CHARS]
    for line in text.splitlines():
        said = ENGINE_LINE.search(line)
        if said and below(line[said.start():], node_version()):
            return line.strip()[:MAX_CHARS]
    return None


def below(requirement: str, current: tuple[int, ...] | None) -> bool:
    """Whether ``current`` is below every lower bound ``requirement`` states (``>=22``, ``^22 || >=24``)."""
    bounds = [tuple(int(p) for p in v.split(".")) for v in re.findall(r"(?:>=?|\^|~)\s*v?(\d{1,9}(?:\.\d{1,9}){0,2})(?!\d)", requirement)]
    if not bounds or not current:
        return False
    return all(current < bound for bound in bounds)


def newest_node_major(today: dt.date | None = None) -> int:
    """The highest Node.js major that can have been released by ``today`` (default: now, UTC):
    Node.js ships a new major each April and October (20 in April 2023, 21 in October 2023), never
    earlier, so none above this number exists yet; a Node running here counts even if newer."""
    day = today or dt.datetime.now(dt.timezone.utc).date()
    scheduled = 20 + 2 * (day.year - 2023) + (day.month >= 4) + (day.month >= 10) - 1
    return max(scheduled, (node_version() or (0,))[0])


def unsatisfiable(requirement: str, today: dt.date | None = None) -> bool:
    """Whether no released Node can meet ``requirement`` (an ``engines.node`` range): every lower
    bound it states is a major above ``newest_node_major`` (``>=99``). Such a requirement is the
    package's mistake, not this machine's age."""
    majors = [int(v) for v in re.findall(r"(?:>=?|\^|~)\s*v?(\d{1,9})(?!\d)", requirement)]
    return bool(majors) and all(major > newest_node_major(today) for major in majors)


def impossible_engine(line: str) -> str | None:
    """For an engine line (``engine_line``, or ``declares engines.node '…'``) whose requirement no
    released Node meets, one sentence saying so; ``None`` otherwise."""
    found = (ENGINE_NODE.search(line) or re.search(r"engines\.node '([^']+)'", line)
             or re.search(r"requires node ([^;]+)", line))
    if found:
        requirement = found.group(1)
    else:
        said = ENGINE_LINE.search(line)
        requirement = re.sub(r"^[^>=^~]*", "", line[said.start():]) if said else ""
    if not requirement or not unsatisfiable(requirement):
        return None
    return (f"the package requires node {requirement.strip()}, which no released Node satisfies (the newest "
            f"major by now is at most {newest_node_major()})")[:MAX_CHARS]


_NODE: list[tuple[int, ...] | None] = []


def node_version() -> tuple[int, ...] | None:
    """The node servers launch with, as numbers (``None`` without node): the record's
    ``isolation.runtimes.node``, read once."""
    if not _NODE:
        printed = isolation.runtime_versions().get("node") or ""
        _NODE.append(tuple(int(p) for p in re.findall(r"\d+", printed)[:3]) or None)
    return _NODE[0]


def names_requirement(line: str) -> bool:
    """Whether ``line`` states a Node engine requirement (npm's EBADENGINE, ``requires node >=22``,
    ``declares engines.node '…'``)."""
    return bool(ENGINE_NODE.search(line) or ENGINE_LINE.search(line)) or "declares engines.node" in line


def satisfies(declared: str) -> bool:
    """Whether this machine's node satisfies an ``engines.node`` range by npm's own semver (True when unknown)."""
    script = ("const s=require(require('path').join(process.argv[1],'npm','node_modules','semver'));"
              "process.stdout.write(String(s.satisfies(process.version, process.argv[2])))")
    try:
        root = subprocess.run(["npm", "root", "-g"], capture_output=True, text=True, timeout=30,
                              check=False).stdout.strip()
        out = subprocess.run(["node", "-e", script, root, declared], capture_output=True, text=True, timeout=30,
                             check=False)
    except (OSError, subprocess.TimeoutExpired):
        return True
    return out.stdout.strip() != "false"
