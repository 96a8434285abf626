r"""Grep: a literal or a regular expression, searched line by line in a repository's files.

What an agent would otherwise run ``rg`` for, within the workspace's rules:

* **Which files.** The files the index holds with their text (those its walk kept: no
  ignored file, nothing under ``.git/``, nothing its include/exclude globs leave out), read
  from disk as they are now, in path order; ``glob`` (gitignore style: ``*.py``,
  ``src/**/*.ts``) narrows them. A file is read only when every part of its path is a real
  directory or file inside the root (opened one component at a time without following
  symlinks; a symlinked file is followed only to a target inside the root); binary files
  (a NUL byte in the first 8 KiB), files over the repository's size cap and files that
  vanished are skipped. A file added since the last index pass is not searched until the
  reconcile loop (or ``repocontext_read`` of it) indexes it. When an ignore file (the
  ``.gitignore`` of a directory holding indexed files, ``.git/info/exclude``) changed since
  the last index pass, the files that match are checked against the repository's rules again
  (one walk of just those paths, as a page checks one) before a line of them is kept.
* **Matching.** One compiled pattern (:mod:`repocontext.search.pattern`: RE2, linear time)
  runs over each file's whole bytes; only a file that matches is split into lines. A match
  never spans a line break. A line is reported once, at its first match (``column``).
* **Answer.** Matches in path and line order, each with up to ``context_lines`` lines
  before and after it. A line is shown once per page: context stops at the neighbouring
  match (and does not repeat the lines of the match before), so ``before`` may be shorter
  than asked; ``before[i]`` is line ``line - len(before) + i``. Lines are shown without their
  line ending and cut at :data:`MAX_LINE_CHARS` characters (a cut is marked ``…``; a long
  matching line is shown around its match).
* **Paging.** At most ``page_size`` matches; ``truncated`` says more exist and
  ``continuation_token`` continues after the last one shown (the token is bound to the
  pattern, its options and the glob: another query refuses it).
"""

from __future__ import annotations

import base64
import bisect
import json
import os
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Final

from repocontext.errors import InvalidInputError, InvalidTokenError, NotFoundError, RootChangedError
from repocontext.index.files.roots import resolve_path
from repocontext.index.files.walk import WalkOptions, path_filter, walk
from repocontext.search._reader import RootedReader
from repocontext.search.pattern import LinePattern, compile_pattern
from repocontext.store import STRUCTURAL, Store, StoreMemo, read_repo
from repocontext.store.keys import family_prefix

__all__ = [
    "DEFAULT_CONTEXT_LINES",
    "DEFAULT_GREP_PAGE",
    "MAX_CONTEXT_LINES",
    "MAX_GREP_PAGE",
    "MAX_LINE_CHARS",
    "GrepMatch",
    "GrepPage",
    "GrepRequest",
    "grep",
]

DEFAULT_CONTEXT_LINES: Final = 2
MAX_CONTEXT_LINES: Final = 10
DEFAULT_GREP_PAGE: Final = 100
MAX_GREP_PAGE: Final = 500
MAX_LINE_CHARS: Final = 300
"""Longest line shown; longer ones are cut (marked with ``…``)."""

_CUT: Final = "…"


@dataclass(frozen=True, slots=True)
class GrepRequest:
    """One grep call.

    Attributes:
        repo_id: A registered repository.
        pattern: The text to find, or a regular expression (RE2 syntax) with ``regex``.
        regex: Read ``pattern`` as a regular expression.
        case_sensitive: Letters must match in case.
        glob: Only files whose path matches this gitignore-style glob.
        context_lines: Lines shown before and after each match, 0..10.
        page_size: Most matches returned, 1..500.
        token: The ``continuation_token`` of the previous page of the same query.
    """

    repo_id: str
    pattern: str
    regex: bool = False
    case_sensitive: bool = True
    glob: str | None = None
    context_lines: int = DEFAULT_CONTEXT_LINES
    page_size: int = DEFAULT_GREP_PAGE
    token: str | None = None


@dataclass(frozen=True, slots=True)
class GrepMatch:
    """A matching line.

    Attributes:
        path: Repository-relative path of the file.
        line: 1-based line number.
        column: 1-based character column of the line's first match.
        text: The line, without its line ending (cut at :data:`MAX_LINE_CHARS`).
        before: Lines just before it, oldest first (see the module docstring).
        after: Lines just after it.
    """

    path: str
    line: int
    column: int
    text: str
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class GrepPage:
    """A page of matches.

    Attributes:
        matches: In path and line order.
        truncated: More matches exist after the last one here.
        continuation_token: Pass back (with the same query) for the next page.
        files_searched: Files read for this page.
    """

    matches: tuple[GrepMatch, ...]
    truncated: bool
    continuation_token: str | None
    files_searched: int


def grep(store: Store, request: GrepRequest) -> GrepPage:
    """Search the repository's indexed files (the rules: module docstring).

    Raises:
        NotFoundError: The repository is not registered.
        InvalidInputError: The pattern or glob is invalid, a bound is out of range.
        InvalidTokenError: The continuation token is malformed or from another query.
        RootChangedError: The repository root now resolves elsewhere.
    """
    _check_bounds(request)
    pattern = compile_pattern(
        request.pattern, regex=request.regex, case_sensitive=request.case_sensitive
    )
    keep = path_filter([request.glob]) if request.glob is not None else None
    repo = read_repo(store, request.repo_id)
    if repo is None:
        raise NotFoundError(f"no repository {request.repo_id[:100]!r} is registered")
    root = Path(repo.root)
    if resolve_path(root) != root:
        raise RootChangedError(f"the root of repository {request.repo_id!r}, {root}, moved")
    query = _fingerprint(request)
    resume = _resume(request.token, query)
    listing = _LISTINGS.get(store, request.repo_id)
    paths = listing.after(resume[0]) if resume else listing.paths
    if keep is not None:
        paths = [p for p in paths if keep(p)]
    options = WalkOptions.from_wire(repo.filters)

    changed: list[bool] = []  # (looked at once, when a file first matches)

    def listed(candidates: list[str]) -> set[str]:
        if not changed:
            changed.append(_rules_changed(root, listing.directories, repo.indexed_at))
        if not changed[0]:
            return set(candidates)  # (the index's list follows the rules as they are)
        return {entry.path for entry in walk(root, options, scope=candidates).entries}

    with RootedReader(root, options.max_file_bytes) as reader:
        return _Search(pattern, request, query, resume, listed).run(reader, paths)


def _check_bounds(request: GrepRequest) -> None:
    if not 0 <= request.context_lines <= MAX_CONTEXT_LINES:
        raise InvalidInputError(
            f"context_lines must be within 0..{MAX_CONTEXT_LINES}, got {request.context_lines}",
            hint="2 lines of context show most matches well.",
        )
    if not 1 <= request.page_size <= MAX_GREP_PAGE:
        raise InvalidInputError(
            f"page_size must be within 1..{MAX_GREP_PAGE}, got {request.page_size}",
            hint="Page through more matches with the continuation token.",
        )


@dataclass(frozen=True, slots=True)
class _Listing:
    """The repository's indexed files in path order, and every directory holding them."""

    paths: list[str]
    directories: tuple[str, ...]

    def after(self, path: str) -> list[str]:
        """The paths from ``path`` on."""
        return self.paths[bisect.bisect_left(self.paths, path) :]

    @classmethod
    def of(cls, paths: list[str]) -> _Listing:
        directories = {""}
        for parent in {path.rpartition("/")[0] for path in paths}:
            parts = parent.split("/")
            directories.update("/".join(parts[: n + 1]) for n in range(len(parts)))
        return cls(paths, tuple(sorted(directories)))


def _list_files(store: Store, repo_id: str) -> _Listing:
    prefix = family_prefix(repo_id, "file")
    return _Listing.of(sorted(key[len(prefix) :] for key in store.keys(STRUCTURAL, prefix)))


# Listing 10,000 file nodes reads every record's liveness header (tens of milliseconds, a
# third of a search): the list is kept until the store changes.
_LISTINGS: Final = StoreMemo(_list_files)


def _rules_changed(root: Path, directories: Sequence[str], indexed_at: str | None) -> bool:
    """Whether an ignore file may have changed since the last index pass (or none ran).

    The ``.gitignore`` of every directory holding indexed files (new ones included) and
    ``.git/info/exclude``: when none is newer than the pass, the index's list of files is
    what the rules keep now.
    """
    try:
        since = datetime.fromisoformat(indexed_at).timestamp() if indexed_at else None
    except ValueError:
        since = None
    if since is None:
        return True
    ignore_files = [f"{d}/.gitignore" if d else ".gitignore" for d in directories]
    for rel in (*ignore_files, ".git/info/exclude"):
        try:
            if os.stat(root / rel).st_mtime >= since:
                return True
        except OSError:
            continue
    return False


class _Search:
    """One page of one query: collects matches until the page is full.

    Matching files wait in ``pending`` until they hold enough lines to fill the page (and
    show whether more exist); then one walk of just those paths (the repository's own rules,
    as a page checks them) drops any the rules now leave out, before a line of them is kept.
    """

    def __init__(
        self,
        pattern: LinePattern,
        request: GrepRequest,
        query: int,
        resume: tuple[str, int] | None,
        listed: Callable[[list[str]], set[str]],
    ) -> None:
        self.pattern = pattern
        self.context = request.context_lines
        self.size = request.page_size
        self.query = query
        self.resume = resume
        self.listed = listed
        self.matches: list[GrepMatch] = []
        self.searched = 0
        self.pending: list[tuple[str, bytes, list[tuple[int, int]]]] = []

    def run(self, reader: RootedReader, paths: Sequence[str]) -> GrepPage:
        waiting = 0
        for path in paths:
            data = reader.read(path)
            if data is None:
                continue
            self.searched += 1
            if self.pattern.search(data) is None:
                continue  # (nearly every file: nothing but one search over its bytes)
            skip = self.resume[1] if self.resume and self.resume[0] == path else 0
            hits = list(_hits(self.pattern, data, skip))
            if not hits:
                continue
            self.pending.append((path, data, hits))
            waiting += len(hits)
            if len(self.matches) + waiting > self.size:
                if self._flush():
                    return self._page(truncated=True)
                waiting = 0
        return self._page(truncated=self._flush())

    def _flush(self) -> bool:
        """Keep the lines of the pending files the rules still list; True when more are left."""
        pending, self.pending = self.pending, []
        if not pending:
            return False
        listed = self.listed([path for path, _, _ in pending])
        for path, data, hits in pending:
            if path not in listed:
                continue
            if len(self.matches) == self.size or self._file(path, data, hits):
                return True
        return False

    def _file(self, path: str, data: bytes, hits: list[tuple[int, int]]) -> bool:
        """Add the file's matching lines while there is room; True when some are left."""
        room = self.size - len(self.matches)
        lines = _lines(data)
        shown = hits[:room]
        for at, (number, column) in enumerate(shown):
            low = max(number - self.context, shown[at - 1][0] + 1 + self.context if at else 1)
            following = shown[at + 1][0] if at + 1 < len(shown) else len(lines) + 1
            high = min(number + self.context, following - 1, len(lines))
            self.matches.append(
                GrepMatch(
                    path,
                    number,
                    column,
                    _shown(lines[number - 1], column),
                    tuple(map(_shown, lines[max(low, 1) - 1 : number - 1])),
                    tuple(map(_shown, lines[number:high])),
                )
            )
        return len(hits) > room

    def _page(self, *, truncated: bool) -> GrepPage:
        token = None
        if truncated and self.matches:
            last = self.matches[-1]
            token = _token(self.query, last.path, last.line)
        return GrepPage(tuple(self.matches), truncated, token, self.searched)


def _hits(pattern: LinePattern, data: bytes, skip: int) -> Iterator[tuple[int, int]]:
    """``(line, column)`` of each matching line after line ``skip``, in order.

    Only files that match get here past the first search; line numbers are counted
    incrementally between matches, never for the whole file up front.
    """
    pos = 0
    for _ in range(skip):
        pos = data.find(b"\n", pos) + 1
        if pos == 0:
            return
    number, counted, size = skip + 1, pos, len(data)
    while pos <= size:
        span = pattern.search(data, pos)
        if span is None:
            return
        start = span[0]
        if start == size and (size == 0 or data.endswith(b"\n")):
            return  # an empty match after the last line ending: no line is there
        line_start = data.rfind(b"\n", 0, start) + 1
        number += data.count(b"\n", counted, line_start)
        counted = line_start
        column = len(data[line_start:start].decode("utf-8", "replace")) + 1
        yield number, column
        line_end = data.find(b"\n", start)
        if line_end < 0:
            return
        pos = line_end + 1


def _lines(data: bytes) -> list[str]:
    r"""A matching file's lines, decoded (bad bytes replaced), without their ``\n``."""
    lines = data.decode("utf-8", "replace").split("\n")
    if data.endswith(b"\n"):
        lines.pop()  # (the empty tail after the last line ending is no line)
    return lines


def _shown(text: str, column: int | None = None) -> str:
    r"""A line as shown: without a ``\r`` ending, cut around ``column`` when too long."""
    if len(text) <= MAX_LINE_CHARS and not text.endswith("\r"):
        return text  # (nearly every line)
    if text.endswith("\r"):
        text = text[:-1]
    if len(text) <= MAX_LINE_CHARS:
        return text
    start = 0 if column is None else max(0, min(column - 1 - MAX_LINE_CHARS // 4, len(text)))
    end = start + MAX_LINE_CHARS
    return (_CUT if start else "") + text[start:end] + (_CUT if end < len(text) else "")


def _fingerprint(request: GrepRequest) -> int:
    query = [request.repo_id, request.pattern, request.regex, request.case_sensitive]
    return zlib.crc32(json.dumps([*query, request.glob]).encode())


def _token(query: int, path: str, line: int) -> str:
    payload = json.dumps([query, path, line], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(payload).decode()


def _resume(token: str | None, query: int) -> tuple[str, int] | None:
    """Where a page continues: after line ``line`` of ``path``.

    Raises:
        InvalidTokenError: The token is malformed or belongs to another query.
    """
    if token is None:
        return None
    try:
        tag, path, line = json.loads(base64.urlsafe_b64decode(token.encode()))
    except (ValueError, TypeError) as exc:
        raise InvalidTokenError("the continuation token is malformed") from exc
    if not isinstance(path, str) or not isinstance(line, int) or line < 1:
        raise InvalidTokenError("the continuation token is malformed")
    if tag != query:
        raise InvalidTokenError(
            "the continuation token belongs to another query",
            hint="Pass the token back with the same pattern, options and glob.",
        )
    return path, line
