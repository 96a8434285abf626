r"""Pages: a file of a repository, whole or a line range, read from disk as it is now.

A :class:`Page` is what an agent that edits code reads: the file's lines exactly as on disk,
the git blob id of the file's working bytes (what ``git hash-object <file>`` prints, the
fingerprint an edit is checked against) and the exact token count of the text served.

Rules (``docs/retrieval.md``, "Pages"):

* **Which files.** Exactly those the index would hold: the path is relative to the repository
  root (an absolute path under it is accepted). A path leading out of the root (``..``, an
  absolute path elsewhere, a symlink whose target is outside) and a file the repository's
  rules leave out (``.gitignore``, git's excludes, the repository's include/exclude globs,
  ``.git/``) are refused with ``path.outside_workspace``; a file that does not exist with
  ``path.not_found``; a directory, a binary file (a NUL byte in its first 8 KiB, as the
  index decides) and a file that is not valid UTF-8 with ``input.invalid``.
* **Lines.** A line ends after ``\n``; nothing else splits lines (``\r\n`` stays whole in
  the text, a lone ``\r`` is part of its line). A last line without ``\n`` is a line; an
  empty file has none (its page is lines 1-0, empty). ``text`` is the exact slice of the
  file, so the pages of consecutive ranges concatenate to the file and
  ``text.encode()`` equals the bytes of those lines.
* **Ranges** are 1-based and inclusive. An end past the last line is clamped to it (``None``:
  to the end); a start below 1, an end before the start, or a start past the last line is
  refused with ``input.invalid`` naming the range.
* **Budget.** With ``budget_tokens`` the page is cut at whole lines so that ``token_count``
  never exceeds it; ``continuation`` is then the line to start the next page at. When the
  first line alone is over the budget the read is refused with ``input.invalid`` whose hint
  names the smallest budget that serves it (a page never holds part of a line).
* **Freshness.** ``blob_id`` is always computed from the bytes read. When the index holds
  another blob id for the file (or none), the file is re-indexed first (the same path
  refresh the reconcile loop uses), so search, outlines and the page agree. ``fresh`` says
  whether the index holds the page's blob id when the page is returned: False when the store
  is read-only (nothing is written), while an index run of the repository is in progress, or
  before its first index pass has finished.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Final

from repocontext.errors import (
    IndexRunningError,
    InvalidInputError,
    NotFoundError,
    PathNotFoundError,
    PathOutsideWorkspaceError,
    RootChangedError,
)
from repocontext.index.files.fingerprint import git_blob_id, is_binary
from repocontext.index.files.nodes import stored_blob_id
from repocontext.index.files.roots import file_path, is_directory, resolve_path
from repocontext.index.files.walk import WalkOptions, keyable, walk
from repocontext.index.service import IndexService
from repocontext.store import Store, Value, read_repo
from repocontext.tokens import count_tokens

__all__ = [
    "MAX_PATH_CHARS",
    "LineRange",
    "Page",
    "Source",
    "read_page",
    "read_source",
    "split_lines",
]

MAX_PATH_CHARS: Final = 4096
"""Longest path a page request may name (longer ones are refused, never echoed whole)."""

LineRange = tuple[int, int | None]
"""``(start, end)``, 1-based and inclusive; ``end`` ``None`` reads to the end of the file."""


@dataclass(frozen=True, slots=True)
class Page:
    """A file, or a range of its lines, as on disk.

    Attributes:
        path: Repository-relative posix path of the file.
        start_line: First line served (1-based).
        end_line: Last line served (inclusive; ``start_line - 1`` when nothing is served).
        text: Exactly those lines of the file, line endings included; no header.
        blob_id: Git blob id of the whole file's bytes (``git hash-object <file>``).
        token_count: Exact tokens of ``text`` in the workspace's encoding.
        fresh: The index holds ``blob_id`` for this file (see the module docstring).
        continuation: When the page was cut at the budget, the line the next page starts at.
    """

    path: str
    start_line: int
    end_line: int
    text: str
    blob_id: str
    token_count: int
    fresh: bool
    continuation: int | None = None


@dataclass(frozen=True, slots=True)
class Source:
    """A whole file as on disk, read under the rules of a page.

    Attributes:
        path: Repository-relative posix path of the file.
        lines: Its lines, each with its line ending (:func:`split_lines`).
        blob_id: Git blob id of its bytes.
        fresh: The index holds ``blob_id`` for this file.
    """

    path: str
    lines: tuple[str, ...]
    blob_id: str
    fresh: bool


def read_page(
    store: Store,
    index: IndexService,
    repo_id: str,
    path: str,
    lines: LineRange | None = None,
    *,
    budget_tokens: int | None = None,
) -> Page:
    """Read ``path`` of repository ``repo_id`` from disk (the rules: module docstring).

    Args:
        store: The store holding the repository's registration and index.
        index: Re-indexes the file when the index holds another version of it.
        repo_id: A registered repository.
        path: The file, relative to the repository root.
        lines: ``(start, end)``, 1-based inclusive; ``None`` for the whole file.
        budget_tokens: Most tokens of text to serve; ``None`` for no limit.

    Raises:
        NotFoundError: No repository ``repo_id`` is registered.
        PathOutsideWorkspaceError: The path leads outside the root, or the repository's
            rules leave the file out.
        PathNotFoundError: The file does not exist or cannot be read.
        RootChangedError: The repository root now resolves elsewhere.
        InvalidInputError: A directory, a binary or non-UTF-8 file, a bad range or budget.
    """
    if budget_tokens is not None and budget_tokens < 1:
        raise InvalidInputError(
            f"a budget of {budget_tokens} tokens holds no line", hint="Pass a budget of 1 or more."
        )
    source = read_source(store, index, repo_id, path)
    start, end = _bounds(source.path, len(source.lines), lines)
    chosen = source.lines[start - 1 : end]
    counter = partial(count_tokens, encoding=index.encoding)
    kept, tokens = _fit(chosen, budget_tokens, counter, start)
    return Page(
        path=source.path,
        start_line=start,
        end_line=start + kept - 1,
        text="".join(chosen[:kept]),
        blob_id=source.blob_id,
        token_count=tokens,
        fresh=source.fresh,
        continuation=start + kept if kept < len(chosen) else None,
    )


def read_source(store: Store, index: IndexService, repo_id: str, path: str) -> Source:
    """Read a whole file from disk as :func:`read_page` does: the same path rules, freshness.

    The file is re-indexed first when the index holds another version of it (module
    docstring, "Freshness"), so the index's outline of it describes these lines when
    ``fresh`` is true.

    Raises:
        RepoContextError: As :func:`read_page` (``repo.not_found``, ``path.*``,
            ``input.invalid`` for a directory, a binary or a non-UTF-8 file).
    """
    repo = read_repo(store, repo_id)
    if repo is None:
        raise NotFoundError(f"no repository {repo_id[:100]!r} is registered")
    root, rel = _locate(repo_id, repo.root, repo.filters, path)
    data = _read(root, rel)
    text = _decode(rel, data)
    blob = git_blob_id(data)
    return Source(rel, tuple(split_lines(text)), blob, _freshen(store, index, repo_id, rel, blob))


def split_lines(text: str) -> list[str]:
    r"""``text`` as its lines, each with its ``\n`` (the last one may have none).

    Only ``\n`` ends a line (``str.splitlines`` would also split at ``\r``, form feeds and
    Unicode separators, which would not round-trip). ``"".join`` of the result is ``text``.
    """
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _locate(
    repo_id: str, root_value: str, filters: Mapping[str, Value] | None, path: str
) -> tuple[Path, str]:
    """The repository root and the file's key path, after every path rule held.

    Raises:
        InvalidInputError: The path is malformed or names a directory.
        PathOutsideWorkspaceError: It leads outside the root, or the file is left out.
        PathNotFoundError: The file does not exist.
        RootChangedError: The root now resolves elsewhere.
    """
    if len(path) > MAX_PATH_CHARS or "\x00" in path:
        raise InvalidInputError(
            f"{path[:100]!r} is no file path",
            hint=f"Pass a path relative to the repository root, at most {MAX_PATH_CHARS} "
            "characters, without NUL bytes.",
        )
    root = Path(root_value)
    rel = file_path(str(root), path)
    if resolve_path(root) != root:
        raise RootChangedError(f"the root of repository {repo_id!r}, {root}, moved")
    target = resolve_path(root / rel)
    if not target.is_relative_to(root):
        raise PathOutsideWorkspaceError(
            f"{rel[:200]} leads outside the repository (to {str(target)[:200]})",
            hint="Pass a file inside the repository; symlinks out of it are not followed.",
        )
    if not target.exists():
        raise PathNotFoundError(
            f"no file {rel[:200]} in repository {repo_id!r}",
            hint="Check the path (relative to the repository root); repocontext_search "
            "and repocontext_scan list the files that exist.",
        )
    if is_directory(target):
        raise InvalidInputError(
            f"{rel[:200]} is a directory", hint="Pass a file; scan lists a directory's files."
        )
    _check_listed(root, rel, WalkOptions.from_wire(filters))
    return root, rel


def _check_listed(root: Path, rel: str, options: WalkOptions) -> None:
    """Refuse a file the index would not hold (the walk's own rules decide).

    Raises:
        PathOutsideWorkspaceError: The rules leave it out, or it is a symlink out.
        PathNotFoundError: The walk could not read it.
    """
    result = walk(root, options, scope=[rel])
    if any(entry.path == rel for entry in result.entries):
        return
    reason = next((issue.reason for issue in result.issues if issue.path == rel), None)
    if reason is None:
        raise PathOutsideWorkspaceError(
            f"{rel[:200]} is left out by the repository's rules (.gitignore, git's "
            "excludes or its include/exclude globs)",
            hint="Only files the index holds are served; read another file.",
        )
    if reason == "symlink_outside":
        raise PathOutsideWorkspaceError(f"{rel[:200]} is a symlink leading outside the root")
    raise PathNotFoundError(f"{rel[:200]} cannot be read ({reason})")


def _read(root: Path, rel: str) -> bytes:
    """The file's bytes.

    Raises:
        PathNotFoundError: The file vanished or cannot be read.
        InvalidInputError: It is binary.
    """
    try:
        data = (root / rel).read_bytes()
    except OSError as exc:
        raise PathNotFoundError(f"{rel[:200]} cannot be read: {exc.strerror}") from exc
    if is_binary(data):
        raise InvalidInputError(
            f"{rel[:200]} is a binary file (a NUL byte in its first 8 KiB)",
            hint="Pages serve text files only.",
        )
    return data


def _decode(rel: str, data: bytes) -> str:
    """``data`` as UTF-8, strictly: a page must encode back to the bytes it came from.

    Raises:
        InvalidInputError: The bytes are not valid UTF-8 (the line of the first bad byte).
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InvalidInputError(
            f"{rel[:200]} is not valid UTF-8 (line {line})",
            hint="Pages serve UTF-8 text only; its bytes would not round-trip.",
        ) from exc


def _bounds(rel: str, total: int, lines: LineRange | None) -> tuple[int, int]:
    """The first and last line to serve (``end`` clamped to ``total``).

    Raises:
        InvalidInputError: The range is empty, starts below 1 or past the last line.
    """
    if lines is None:
        return 1, total
    start, end = lines
    named = f"lines {start}-{'' if end is None else end}"
    if start < 1 or (end is not None and end < start):
        raise InvalidInputError(
            f"{named} is no line range",
            hint="Lines are 1-based and inclusive: pass start >= 1 and end >= start.",
        )
    if start > max(total, 1):
        raise InvalidInputError(
            f"{named} starts past the end of {rel[:200]} ({total} lines)",
            hint=f"Pass a start line from 1 to {max(total, 1)}.",
        )
    return start, total if end is None else min(end, total)


def _fit(
    lines: Sequence[str], budget: int | None, count: Callable[[str], int], start: int
) -> tuple[int, int]:
    """How many of ``lines`` fit in ``budget`` tokens, and their exact token count.

    Every candidate prefix is counted whole (token counts do not add up across line
    boundaries), by bisection: the answer is a prefix whose own count fits.

    Raises:
        InvalidInputError: The first line alone is over the budget.
    """
    whole = count("".join(lines))
    if budget is None or whole <= budget:
        return len(lines), whole
    low, high, tokens = 0, len(lines) - 1, 0
    while low < high:
        middle = (low + high + 1) // 2
        counted = count("".join(lines[:middle]))
        if counted <= budget:
            low, tokens = middle, counted
        else:
            high = middle - 1
    if low == 0:
        needed = count(lines[0])
        raise InvalidInputError(
            f"line {start} alone is {needed} tokens, over the budget of {budget}",
            hint=f"Pass a budget of at least {needed} tokens to read from line {start}.",
        )
    return low, tokens


def _freshen(store: Store, index: IndexService, repo_id: str, rel: str, blob: str) -> bool:
    """Whether the index holds ``blob`` for the file, re-indexing it first when it does not."""
    if not keyable(repo_id, rel):
        return False  # (no record can hold this path: the index never holds the file)
    if stored_blob_id(store, repo_id, rel) == blob:
        return True
    if store.backend.read_only or _run_in_progress(index, repo_id):
        return False  # (a run picks the change up; waiting for it could take minutes)
    try:
        index.refresh(repo_id, [rel])
    except IndexRunningError:  # (a run of another process holds the repository)
        return False
    return stored_blob_id(store, repo_id, rel) == blob


def _run_in_progress(index: IndexService, repo_id: str) -> bool:
    status = index.status(repo_id)
    return status.status == "running" and status.phase != "embedding"
