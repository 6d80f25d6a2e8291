"""Where the database may be written: the publish scope, and never through a symbolic link
(issue #10, "Commit scope" and "Interrupted publishes", as an attacker reads them).

A publish writes, renames and deletes files under the repository's published paths
(``harness.db.commit.PUBLISHED``) and its own ``.staging/`` folder. Three things must hold for that to
stay inside the repository:

* **no link on the way.** A symbolic link committed (or planted) as ``results/<name>``,
  ``docs/servers`` or ``.staging`` would make a rename land, a stale page be deleted, or an
  unpublished staging folder be emptied *outside* the repository — ``.staging -> ..`` once made a
  sweep delete every folder beside the repository. :func:`obstacles` finds every link in those
  places, and anything else there a publish could not write (a folder where a file is renamed
  to, a fifo); a publish refuses to start (or go on) while there is one, naming it
  (``Unsafe``);
* **only published paths.** A journal is a file on disk, so what it names is checked like any
  input (:func:`in_scope`): ``results/…``, ``badges/…``, ``history.csv`` and the generated pages —
  never ``servers.yaml``, ``.git/hooks/…`` or a hidden or ``..`` component;
* **only its own journals.** ``.staging/`` is written only by a running publish; files in it that
  git tracks (force-added in a pull request: a journal and a forged "record" that the next bot
  sweep would have finished, unvalidated) are refused (:func:`tracked_staging`).

Ad-hoc outputs (``measure --command/--url --out``, ``sweep --shard --out``) are checked with
:func:`published_owner`: a folder that resolves (links followed) into a database's published path
is refused, so only the catalog path writes ``results/`` and ``badges/``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath

from harness.db.commit import PUBLISHED
from harness.util import names
from harness.util.untrusted import escape

STAGING_DIR = ".staging"
# Every component of a published path: server slugs and the generated files' own names.
_COMPONENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
# Folders whose own link would redirect a write into a published path beneath them.
_PARENTS = ("docs",)
_FOLDERS = ("results", "badges", "docs/servers", "docs/sparklines", "docs/trends", STAGING_DIR)
_FILE_SUFFIXES = (".json", ".md", ".csv", ".svg", ".html")
REFUSAL = "paths where the database is written that a publish cannot write safely"


class Unsafe(ValueError):
    """A publish would write through a symbolic link or outside its scope; ``str()`` names the paths."""


def in_scope(relative: object) -> bool:
    """True for a repository-relative POSIX path a publish may write: one of ``PUBLISHED`` or a
    file beneath one of its folders, every component a plain name (letters, digits, ``.``, ``_``,
    ``-``, not starting with ``.``: never ``..``, a hidden file, a glob or a control character)."""
    if not isinstance(relative, str) or not all(_COMPONENT.fullmatch(part) for part in relative.split("/")):
        return False
    return any(relative == top or relative.startswith(top + "/") for top in PUBLISHED)


def obstacles(root: Path) -> list[tuple[str, str]]:
    """``(repository path, what is wrong)`` for everything a publish could not write safely, sorted:
    a symbolic link at or beneath ``.staging``, ``docs`` or a published path (links are not
    followed); a fifo, socket or device there (reading one would hang); a folder named like a file
    the publisher writes (``results/x/measurement.json/``: the rename fails after other files moved,
    and every later recovery fails the same way); a file where the publisher needs a folder
    (``docs/servers``, ``results/<name>`` for a name a catalog entry could have — not ``README``)."""
    root = Path(root)
    found = [(top, _link(root / top)) for top in (STAGING_DIR, *_PARENTS) if (root / top).is_symlink()]
    for top in (STAGING_DIR, *PUBLISHED):
        start = root / top
        if start.is_symlink():
            found.append((top, _link(start)))
        elif start.is_dir() and top.endswith(_FILE_SUFFIXES):  # history.csv/, docs/index.html/
            found.append((top, "a folder named like a file the publisher writes"))
        elif start.is_dir():
            found += _walk(root, start)
        elif start.exists() and top in _FOLDERS:
            found.append((top, "a file where the publisher needs a folder"))
        elif start.exists() and not start.is_file():
            found.append((top, "not a regular file"))
    return sorted(set(found))


def _walk(root: Path, start: Path) -> list[tuple[str, str]]:
    found = []
    for folder, dirs, files in os.walk(start):  # os.walk never descends into a linked folder
        for name in dirs + files:
            path = Path(folder, name)
            relative = str(path.relative_to(root))
            if path.is_symlink():
                found.append((relative, _link(path)))
            elif path.is_dir() and name.endswith(_FILE_SUFFIXES):
                found.append((relative, "a folder named like a file the publisher writes"))
            elif not path.is_dir() and not path.is_file():
                found.append((relative, "not a regular file (a fifo, socket or device)"))
            elif path.is_file() and folder == str(root / "results") and names.is_catalog_name(name):
                found.append((relative, "a file where the publisher needs a folder (results/<name>/)"))
    return found


def refuse_obstacles(root: Path) -> None:
    """Raise :class:`Unsafe` naming everything :func:`obstacles` finds (at most 20 lines)."""
    found = obstacles(root)
    if found:
        shown = "\n".join(f"  {escape(p)}: {escape(why)}" for p, why in found[:20])
        more = f"\n  … and {len(found) - 20} more" if len(found) > 20 else ""
        raise Unsafe(f"{REFUSAL}:\n{shown}{more}\nremove or fix them (git rm, or rm for an untracked one), then run "
                     "again")


def tracked_staging(root: Path) -> list[str]:
    """Files under ``.staging/`` that git tracks (force-added past ``.gitignore``, say in a pull
    request), sorted. A publish finishes only journals a run of its own wrote: a committed journal
    and its staged "record" would otherwise be published, unvalidated, by the next bot sweep."""
    try:
        import git  # here: gitpython costs ~0.07 s to import, and an ad-hoc measure never needs it

        repo = git.Repo(root)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return []
    return sorted(p for p in repo.git.ls_files("-z", "--", STAGING_DIR).split("\0") if p)


def refuse_tracked_staging(root: Path) -> None:
    """Raise :class:`Unsafe` naming the files :func:`tracked_staging` finds."""
    tracked = tracked_staging(root)
    if tracked:
        shown = "\n".join(f"  {escape(p)}" for p in tracked[:20]) + (f"\n  … and {len(tracked) - 20} more"
                                                                     if len(tracked) > 20 else "")
        raise Unsafe(f"git tracks files in the staging folder, which only a running publish writes:\n{shown}\n"
                     f"remove them from the repository (git rm -r {STAGING_DIR}), then run again")


def link_on_path(base: Path, relative: str) -> str | None:
    """The first component of ``base/relative`` (``base`` itself excluded) that is a symbolic link,
    as a path relative to ``base``; ``None`` when there is none (missing components are fine)."""
    current = Path(base)
    for part in PurePosixPath(relative).parts:
        current = current / part
        if current.is_symlink():
            return str(current.relative_to(base))
    return None


def published_owner(path: Path, databases: list[Path]) -> str | None:
    """When ``path`` (links followed) is at or beneath a published path of one of ``databases``
    (repository roots), that published path as ``<database>/<published>``; else ``None``."""
    target = Path(path).resolve()
    for root in dict.fromkeys(Path(d).resolve() for d in databases):
        try:
            relative = target.relative_to(root).as_posix()
        except ValueError:
            continue
        for top in PUBLISHED:
            if relative == top or relative.startswith(top + "/"):
                return str(root / top)
    return None


def _link(link: Path) -> str:
    try:
        return f"a symbolic link (-> {os.readlink(link)}); a publish never writes through one"
    except OSError:
        return "a symbolic link; a publish never writes through one"
