"""Where the database may be written: the publish scope, and never through a symbolic link
(issue #10, "Commit scope" and "Interrupted publishes", as an attacker reads them).

A publish writes, renames and deletes files under the repository's published paths
(``harness.db.commit.PUBLISHED``) and its own ``.staging/`` folder. Two things must hold for that to
stay inside the repository:

* **no link on the way.** A symbolic link committed (or planted) as ``results/<name>``,
  ``docs/servers`` or ``.staging`` would make a rename land, a stale page be deleted, or an
  unpublished staging folder be emptied *outside* the repository — ``.staging -> ..`` once made a
  sweep delete every folder beside the repository. :func:`planted_links` finds every link in those
  places; a publish refuses to start (or go on) while there is one, naming it (``Unsafe``);
* **only published paths.** A journal is a file on disk, so what it names is checked like any
  input (:func:`in_scope`): ``results/…``, ``badges/…``, ``history.csv`` and the generated pages —
  never ``servers.yaml``, ``.git/hooks/…`` or a hidden or ``..`` component.

Ad-hoc outputs (``measure --command/--url --out``, ``sweep --shard --out``) are checked with
:func:`published_owner`: a folder that resolves (links followed) into a database's published path
is refused, so only the catalog path writes ``results/`` and ``badges/``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath

from harness.db.commit import PUBLISHED
from harness.util.untrusted import escape

STAGING_DIR = ".staging"
CATALOG = "servers.yaml"
# Every component of a published path: server slugs and the generated files' own names.
_COMPONENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
# Folders whose own link would redirect a write into a published path beneath them.
_PARENTS = ("docs",)


class Unsafe(ValueError):
    """A publish would write through a symbolic link or outside its scope; ``str()`` names the paths."""


def in_scope(relative: object) -> bool:
    """True for a repository-relative POSIX path a publish may write: one of ``PUBLISHED`` or a
    file beneath one of its folders, every component a plain name (letters, digits, ``.``, ``_``,
    ``-``, not starting with ``.``: never ``..``, a hidden file, a glob or a control character)."""
    if not isinstance(relative, str) or not all(_COMPONENT.fullmatch(part) for part in relative.split("/")):
        return False
    return any(relative == top or relative.startswith(top + "/") for top in PUBLISHED)


def planted_links(root: Path) -> list[str]:
    """Repository paths of every symbolic link at or beneath ``.staging`` and the published paths
    (and at ``docs`` itself), sorted. Links are not followed."""
    root = Path(root)
    found = [top for top in (STAGING_DIR, *_PARENTS) if (root / top).is_symlink()]
    for top in (STAGING_DIR, *PUBLISHED):
        start = root / top
        if start.is_symlink():
            found.append(top)
            continue
        if not start.is_dir():
            continue
        for folder, dirs, files in os.walk(start):  # os.walk never descends into a linked folder
            for name in dirs + files:
                if os.path.islink(os.path.join(folder, name)):
                    found.append(str(Path(folder, name).relative_to(root)))
    return sorted(set(found))


def refuse_links(root: Path) -> None:
    """Raise :class:`Unsafe` naming every link :func:`planted_links` finds."""
    links = planted_links(root)
    if links:
        shown = "\n".join(f"  {escape(p)} -> {escape(_target(Path(root) / p))}" for p in links[:20])
        more = f"\n  … and {len(links) - 20} more" if len(links) > 20 else ""
        raise Unsafe(f"symbolic links where the database is written (a publish never writes through one):\n{shown}"
                     f"{more}\nremove them (git rm, or rm for an untracked one), then run again")


def link_on_path(base: Path, relative: str) -> str | None:
    """The first component of ``base/relative`` (``base`` itself excluded) that is a symbolic link,
    as a path relative to ``base``; ``None`` when there is none (missing components are fine)."""
    current = Path(base)
    for part in PurePosixPath(relative).parts:
        current = current / part
        if current.is_symlink():
            return str(current.relative_to(base))
    return None


def published_owner(path: Path, databases: list[Path] = ()) -> str | None:
    """When ``path`` (links followed) is at or beneath a published path of a database — one of
    ``databases``, or any folder above ``path`` holding a ``servers.yaml`` — that published path as
    ``<database>/<published>``; else ``None``."""
    target = Path(path).resolve()
    roots = [Path(d).resolve() for d in databases]
    roots += [p for p in target.parents if (p / CATALOG).is_file()]
    for root in dict.fromkeys(roots):
        try:
            relative = target.relative_to(root).as_posix()
        except ValueError:
            continue
        for top in PUBLISHED:
            if relative == top or relative.startswith(top + "/"):
                return str(root / top)
    return None


def _target(link: Path) -> str:
    try:
        return os.readlink(link)
    except OSError:
        return "?"
