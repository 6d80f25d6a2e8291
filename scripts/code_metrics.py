"""How carryable the code is: modules, lines, docstring words per code line, median module docstring,
README median paragraph, issue-number references, function-level imports without a one-line reason,
and (with --mypy) mypy's error count.

Usage: python scripts/code_metrics.py [--mypy] [PACKAGE_DIR ...]   (default: harness)
"""

from __future__ import annotations

import argparse
import ast
import re
import statistics
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOCUMENTED = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
ISSUE_REF = re.compile(r"issue #\d+|\(#\d+\)|#\d{1,2}\b(?![0-9a-fA-F])")


@dataclass
class Counts:
    modules: int = 0
    lines: int = 0
    code_lines: int = 0  # neither blank, nor a comment, nor inside a docstring
    docstring_words: int = 0
    module_docstring_words: list[int] = field(default_factory=list)
    issue_refs: int = 0
    lazy_imports: int = 0  # imports inside a function
    unexplained: list[str] = field(default_factory=list)  # of those, with no comment on or just above them


def docstring(node: ast.AST) -> tuple[str, range] | None:
    """``node``'s docstring and the lines it spans, if it has one."""
    if isinstance(node, DOCUMENTED) and node.body:
        first = node.body[0]
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            return first.value.value, range(first.lineno, (first.end_lineno or first.lineno) + 1)
    return None


def lazy_imports(tree: ast.AST, lines: list[str], where: str, counts: Counts) -> None:
    """Count imports inside functions; note those with no comment on the line, above it, or above the
    run of import lines it belongs to."""
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(fn):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            counts.lazy_imports += 1
            k = node.lineno - 1
            explained = "#" in lines[k]
            while not explained and k > 0:
                above = lines[k - 1].strip()
                explained = above.startswith("#") or (above.startswith(("from ", "import ")) and "#" in above)
                if explained or not above.startswith(("from ", "import ", "try:")):
                    break
                k -= 1
            if not explained:
                counts.unexplained.append(f"{where}:{node.lineno}")


def count_module(source: str, counts: Counts, where: str = "") -> None:
    tree = ast.parse(source)
    doc_lines: set[int] = set()
    for node in ast.walk(tree):
        found = docstring(node)
        if found is None:
            continue
        words = len(found[0].split())
        counts.docstring_words += words
        if isinstance(node, ast.Module):
            counts.module_docstring_words.append(words)
        doc_lines.update(found[1])
    lines = source.splitlines()
    counts.modules += 1
    counts.lines += len(lines)
    counts.code_lines += sum(1 for i, line in enumerate(lines, 1)
                             if line.strip() and not line.strip().startswith("#") and i not in doc_lines)
    counts.issue_refs += len(ISSUE_REF.findall(source))
    lazy_imports(tree, lines, where, counts)


def paragraph_words(markdown: str) -> list[int]:
    """Words per prose block of ``markdown``: headings, tables and fenced code left out."""
    sizes = []
    for block in re.split(r"\n\s*\n", markdown):
        text = block.strip()
        if text and not text.startswith(("#", "|", "```")):
            sizes.append(len(text.split()))
    return sizes


def mypy_errors() -> str:
    """mypy's summary line over ``[tool.mypy]`` files, default settings."""
    done = subprocess.run([sys.executable, "-m", "mypy"], cwd=REPO, capture_output=True, text=True)
    return (done.stdout.strip().splitlines() or ["(no output)"])[-1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("packages", nargs="*", default=["harness"], help="package folders (default: harness)")
    parser.add_argument("--mypy", action="store_true", help="also run mypy and print its summary line")
    args = parser.parse_args(argv)
    counts = Counts()
    for package in args.packages:
        for path in sorted((REPO / package).rglob("*.py")):
            count_module(path.read_text(encoding="utf-8"), counts, str(path.relative_to(REPO)))
    paragraphs = paragraph_words((REPO / "README.md").read_text(encoding="utf-8"))
    median_module = statistics.median(counts.module_docstring_words) if counts.module_docstring_words else 0
    print(f"modules / total lines: {counts.modules} / {counts.lines:,}")
    print(f"docstring words per code line: {counts.docstring_words / max(counts.code_lines, 1):.2f} "
          f"({counts.docstring_words:,} words, {counts.code_lines:,} code lines)")
    print(f"module docstring, median words: {median_module:g} "
          f"({len(counts.module_docstring_words)} of {counts.modules} modules have one)")
    print(f"README median paragraph: {statistics.median(paragraphs):g} words ({len(paragraphs)} paragraphs)")
    print(f"issue-number references: {counts.issue_refs}")
    print(f"function-level imports: {counts.lazy_imports}, {len(counts.unexplained)} without a one-line reason"
          + "".join(f"\n  {where}" for where in counts.unexplained))
    if args.mypy:
        print(f"mypy: {mypy_errors()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
