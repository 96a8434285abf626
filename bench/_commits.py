"""Benchmark tasks from real commit histories, selected by rule (never by hand).

A task is one commit: its message (subject and body, whitespace folded) is what the agent is
asked; what it needed is the parent-side lines the commit changed in the language's non-test
source files. A hunk that only inserts (``@@ -a,0 +c,d @@``) needs the line it inserts after
(line ``a``; line 1 when ``a`` is 0): an agent must see where the new code goes.

The rule, in order: first-parent, non-merge commits, newest first; skip subjects that name a
revert, merge, release, version bump, changelog, formatting or lint run; keep commits that
modify (or delete) 1 to 5 source files that existed in the parent, whose message has at least
three words and whose diff is not whitespace-only; take the newest ``limit`` of those and
return them oldest first (each checkout is then a small step forward).
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Final

__all__ = ["Task", "git", "is_source", "select_tasks", "source_texts"]

SKIP: Final = re.compile(
    r"^(revert|merge|bump|release|version|prepare|changelog|format|reformat|black|isort|"
    r"ruff|lint|pre-commit|typo|update (copyright|changelog|docs|requirements))|"
    r"\b(bump version|release \d|version \d|apply black|run black|ruff format)\b",
    re.IGNORECASE,
)
HUNK: Final = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", re.MULTILINE)
MAX_QUERY_CHARS: Final = 2000
MAX_FILES: Final = 5
TEST_PARTS: Final = re.compile(r"(^|/)(tests?|testing)(/|$)|(^|/)test_[^/]*$|_test\.py$")


@dataclass(frozen=True, slots=True)
class Task:
    """One commit as a benchmark task.

    Attributes:
        commit: The commit.
        parent: Its first parent (the tree the agent works on).
        query: The commit message, whitespace folded.
        lines: Per changed source file, the parent-side line numbers the agent needed.
    """

    commit: str
    parent: str
    query: str
    lines: dict[str, frozenset[int]]

    @property
    def files(self) -> list[str]:
        """The changed source files, sorted."""
        return sorted(self.lines)

    @property
    def line_count(self) -> int:
        """How many parent-side lines were needed."""
        return sum(len(v) for v in self.lines.values())


def git(repo: Path, *args: str) -> str:
    """Run git in ``repo`` and return its output."""
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


def is_source(path: str, suffix: str = ".py") -> bool:
    """A non-test source file of the language (documentation and examples excluded)."""
    return (
        path.endswith(suffix)
        and not TEST_PARTS.search(path)
        and not path.startswith(("docs/", "doc/", "examples/", "benchmarks/"))
    )


def changed_lines(repo: Path, parent: str, commit: str, path: str) -> frozenset[int]:
    """The parent-side lines of ``path`` that ``commit`` changed (see the module doc)."""
    diff = git(repo, "diff", "-U0", "--no-color", "--no-ext-diff", parent, commit, "--", path)
    needed: set[int] = set()
    for match in HUNK.finditer(diff):
        start, length = int(match.group(1)), int(match.group(2) or "1")
        needed.update(range(start, start + length) if length else [max(start, 1)])
    return frozenset(needed)


def select_tasks(repo: Path, limit: int, suffix: str = ".py") -> list[Task]:
    """The newest ``limit`` commits of ``repo`` that pass the rule, oldest first."""
    log = git(
        repo,
        "log",
        "--no-merges",
        "--first-parent",
        "--no-renames",
        "--format=%x1e%H %P%x1f%B%x1f",
        "--name-status",
        "-n",
        "4000",
    )
    tasks: list[Task] = []
    for record in log.split("\x1e")[1:]:
        task = _task_of(repo, record, suffix)
        if task is not None:
            tasks.append(task)
            if len(tasks) >= limit:
                break
    return list(reversed(tasks))


def _task_of(repo: Path, record: str, suffix: str) -> Task | None:
    head, message, names = [*record.split("\x1f"), "", ""][:3]
    parts = head.split()
    subject = message.strip().splitlines()[0] if message.strip() else ""
    if len(parts) != 2 or not subject or SKIP.search(subject):
        return None
    commit, parent = parts
    changed = []
    for line in names.strip().splitlines():
        fields = line.split("\t")
        if len(fields) >= 2 and fields[0][:1] in ("M", "D") and is_source(fields[1], suffix):
            changed.append(fields[1])
    query = " ".join(message.split())[:MAX_QUERY_CHARS]
    if not 1 <= len(changed) <= MAX_FILES or len(query.split()) < 3:
        return None
    if not git(repo, "diff", "-w", "--stat", parent, commit, "--", *changed).strip():
        return None  # whitespace-only: a format commit
    lines = {path: changed_lines(repo, parent, commit, path) for path in sorted(set(changed))}
    lines = {path: needed for path, needed in lines.items() if needed}
    return Task(commit, parent, query, lines) if lines else None


def source_texts(checkout: Path, pattern: str = "*.py") -> dict[str, str]:
    """Path -> text of the tracked files of ``checkout`` matching ``pattern`` (UTF-8 only)."""
    texts: dict[str, str] = {}
    for path in git(checkout, "ls-files", pattern).splitlines():
        try:
            texts[path] = (checkout / path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
    return texts
