"""Context pages: what the worker reads, each a whole file or a slice of one, from disk now.

* **Whole or slice.** A file of at most 12,000 characters (32,000 for a high-risk task) is one
  ``file`` page; a longer one is a ``slice`` of about 6,000 characters, whole lines only,
  centred on the best-matching lines (a search hit's range, a matched or requested symbol;
  the top of the file when there are none). A single line longer than that is a slice alone.
* **Ids.** ``file:<path>:<fingerprint>`` for a whole file, ``file:<path>:<fingerprint>:L<a>-L<b>``
  for a slice, the fingerprint being the git blob id of the whole file's bytes as
  ``Workspace.page`` read them (what ``git hash-object <path>`` prints). An edited file gets
  new ids; an id never names two contents.
* **Exact tokens.** ``token_count`` is the count ``Workspace.page`` made of the text served.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from lattice_runtime.errors import ContextError
from repocontext.errors import RepoContextError
from repocontext.workspace import Workspace

__all__ = [
    "SLICE_CHARS",
    "WHOLE_FILE_CHARS",
    "WHOLE_FILE_CHARS_HIGH_RISK",
    "ContextPage",
    "PageKind",
    "PageReason",
    "PageRequest",
    "current_fingerprint",
    "page_id",
    "read_context_page",
    "slice_bounds",
]

WHOLE_FILE_CHARS: Final = 12_000
WHOLE_FILE_CHARS_HIGH_RISK: Final = 32_000
SLICE_CHARS: Final = 6_000

PageKind = Literal["file", "slice"]
PageReason = Literal[
    "test",
    "imported by test",
    "import hop",
    "search hit",
    "requested path",
    "requested symbol",
]
"""Why a page was chosen."""


@dataclass(frozen=True, slots=True)
class ContextPage:
    """A granted page.

    Attributes:
        id: ``file:<path>:<fingerprint>`` or ``file:<path>:<fingerprint>:L<a>-L<b>``.
        kind: ``file`` (the whole file) or ``slice``.
        path: Repository-relative posix path.
        symbol: The symbol the page is about (matched or requested), if any.
        fingerprint: Git blob id of the whole file when the page was read.
        lines: First and last line served, 1-based inclusive (``(1, 0)``: an empty file).
        content: Those lines exactly as on disk.
        reason: Why the page was chosen (:data:`PageReason`).
        provenance: What led to it: the relevance signals, search reasons, the import or
            the request that named it.
        token_count: Exact tokens of ``content``.
        is_test: The index classifies the file as a test.
    """

    id: str
    kind: PageKind
    path: str
    symbol: str | None
    fingerprint: str
    lines: tuple[int, int]
    content: str
    reason: PageReason
    provenance: tuple[str, ...]
    token_count: int
    is_test: bool


@dataclass(frozen=True, slots=True)
class PageRequest:
    """What to read as a page, and why.

    Attributes:
        path: The file.
        reason: Why it is read.
        is_test: The index classifies it as a test.
        focus: The lines a slice is centred on (``None``: the top of the file).
        symbol: The symbol the page is about.
        provenance: What led to it.
    """

    path: str
    reason: PageReason
    is_test: bool = False
    focus: tuple[int, int] | None = None
    symbol: str | None = None
    provenance: tuple[str, ...] = ()


def page_id(path: str, fingerprint: str, lines: tuple[int, int] | None = None) -> str:
    """The id of a whole-file page (``lines`` ``None``) or of a slice."""
    base = f"file:{path}:{fingerprint}"
    return base if lines is None else f"{base}:L{lines[0]}-L{lines[1]}"


def read_context_page(
    workspace: Workspace, repo_id: str, request: PageRequest, *, whole_limit: int
) -> ContextPage:
    """Read ``request.path`` now as a whole-file page or a slice (module docstring).

    Raises:
        ContextError: The file cannot be read as a page (gone, outside the repository's
            rules, binary, not UTF-8).
    """
    whole = _page(workspace, repo_id, request.path, None)
    if len(whole.text) <= whole_limit:
        lines = (whole.start_line, whole.end_line)
        return _context_page(request, "file", whole.blob_id, lines, whole.text, whole.token_count)
    bounds = slice_bounds(_lines(whole.text), request.focus)
    part = _page(workspace, repo_id, request.path, bounds)
    lines = (part.start_line, part.end_line)
    return _context_page(request, "slice", part.blob_id, lines, part.text, part.token_count)


def current_fingerprint(workspace: Workspace, repo_id: str, path: str) -> str | None:
    """The file's blob id as on disk now (``None``: it can no longer be read as a page)."""
    try:
        return workspace.page(repo_id, path, (1, 1)).blob_id
    except RepoContextError:
        return None


def slice_bounds(
    lines: Sequence[str], focus: tuple[int, int] | None, limit: int = SLICE_CHARS
) -> tuple[int, int]:
    """The 1-based inclusive range of at most ``limit`` characters centred on ``focus``.

    The range grows from the focus's middle line one line up, then one down, while the
    characters fit; one line over the limit is a range alone.
    """
    total = len(lines)
    if total == 0:
        return 1, 1
    first, last = focus if focus is not None else (1, 1)
    centre = min(max((max(first, 1) + max(last, first, 1)) // 2, 1), total)
    start = end = centre
    size = len(lines[centre - 1])
    grown = True
    while grown:
        grown = False
        if start > 1 and size + len(lines[start - 2]) <= limit:
            start, size, grown = start - 1, size + len(lines[start - 2]), True
        if end < total and size + len(lines[end]) <= limit:
            end, size, grown = end + 1, size + len(lines[end]), True
    return start, end


def _lines(text: str) -> list[str]:
    """The lines as pages number them: only a newline character ends a line."""
    parts = text.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _page(workspace: Workspace, repo_id: str, path: str, lines: tuple[int, int] | None) -> _Read:
    try:
        page = workspace.page(repo_id, path, lines)
    except RepoContextError as exc:
        raise ContextError(f"{path} cannot be read: {exc}", hint=exc.hint) from exc
    return _Read(page.start_line, page.end_line, page.text, page.blob_id, page.token_count)


@dataclass(frozen=True, slots=True)
class _Read:
    start_line: int
    end_line: int
    text: str
    blob_id: str
    token_count: int


def _context_page(
    request: PageRequest,
    kind: PageKind,
    fingerprint: str,
    lines: tuple[int, int],
    content: str,
    tokens: int,
) -> ContextPage:
    return ContextPage(
        id=page_id(request.path, fingerprint, lines if kind == "slice" else None),
        kind=kind,
        path=request.path,
        symbol=request.symbol,
        fingerprint=fingerprint,
        lines=lines,
        content=content,
        reason=request.reason,
        provenance=request.provenance,
        token_count=tokens,
        is_test=request.is_test,
    )
