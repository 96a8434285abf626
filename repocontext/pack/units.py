"""The units a bundle slices a file into, and the receipts of runs of them.

A file is cut into *tiles* by its outline alone (never by the task or the budget, so the
same version of a file always gives the same tiles, and a receipt sent once is recognised
again): a top-level function is one tile; a class (any definition with nested ones) larger
than :data:`SPLIT_TOKENS` becomes its signature line(s) (a ``sig`` tile, which a chosen
method is widened with), the blocks between its members and its members, recursively;
module-level code between definitions (imports, constants) is a ``block`` tile. Blank lines
between tiles belong to none; tiles longer than :data:`MAX_TILE_LINES` are cut into windows,
as are files without an outline.

A delivered unit is a *run*: consecutive tiles of one file, sent as one range, with the blank
lines that follow its last tile (up to the next tile): where new code goes after a definition
is part of what an agent reads. Its receipt is bound to its text through the digests of its
tiles and the blank lines after each, so the receipts of every run of a file can be
recomputed cheaply to recognise the ones a caller already holds (:func:`run_receipts`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from repocontext.index.model import Symbol

__all__ = [
    "MAX_RUN_TILES",
    "MAX_TILE_LINES",
    "SPLIT_TOKENS",
    "Tile",
    "TileKind",
    "gap_end",
    "receipt",
    "run_receipt",
    "run_receipts",
    "short_hash",
    "source_lines",
    "tiles_of",
]

TileKind = Literal["def", "sig", "block"]
SPLIT_TOKENS: Final = 400
"""A definition with nested ones larger than this (estimated at 4 characters a token) is
split into its members; a smaller one stays one tile."""
MAX_TILE_LINES: Final = 120
WINDOW_LINES: Final = 60
"""Tiles longer than :data:`MAX_TILE_LINES` lines are cut into windows of this many lines."""
MAX_RUN_TILES: Final = 64
"""Runs longer than this are not recognised again by receipt (they are rare: a run that
long is usually a whole file, which has its own receipt)."""
HASH_CHARS: Final = 16
"""Receipts and content hashes are the first 16 hex digits (64 bits) of a SHA-256: a random
collision among a million receipts has odds of about 1 in 36 million, and each receipt is
bound to its repository, path and text (a hash of 64 hex digits costs ~35 tokens, this ~11)."""
_SPLIT_KINDS: Final = frozenset({"function", "method", "constructor", "macro"})
"""Definitions whose nested definitions stay inside them (a function's inner helpers)."""


@dataclass(frozen=True, slots=True)
class Tile:
    """One canonical piece of a file.

    Attributes:
        start: 1-based first line.
        end: 1-based last line (inclusive).
        kind: ``def`` (a definition, or a window of one), ``sig`` (the signature line(s) of a
            split class) or ``block`` (code between definitions).
        symbol: The definition's fully qualified name (a block: the enclosing one, if any).
        name: The definition's bare name (``None`` for a block).
        owner: Index of the ``sig`` tile of the enclosing split definition (-1: none).
    """

    start: int
    end: int
    kind: TileKind
    symbol: str | None = None
    name: str | None = None
    owner: int = -1


def short_hash(text: str) -> str:
    """The first :data:`HASH_CHARS` hex digits of the SHA-256 of ``text``."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_CHARS]


def receipt(repo_id: str, path: str, content_hash: str, kind: str, unit_key: str) -> str:
    """The receipt of one delivered unit (bound to the hash of its text)."""
    raw = "\0".join((repo_id, path, content_hash, kind, unit_key)).encode()
    return hashlib.sha256(raw).hexdigest()[:HASH_CHARS]


def source_lines(text: str) -> list[str]:
    r"""``text``'s lines as the outlines number them: split at ``\n`` only, ends kept.

    ``str.splitlines`` also splits at form feeds, ``\x1c``-``\x1e``, ``\x85`` and the
    Unicode line and paragraph separators, which would shift every range after one.
    """
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def tiles_of(symbols: Sequence[Symbol], lines: Sequence[str]) -> list[Tile]:
    """Cut a file of ``lines`` with outline ``symbols`` into tiles, in line order."""
    out: list[Tile] = []
    _cover(symbols, 1, len(lines), -1, None, lines, out)
    return out


def _cover(
    symbols: Sequence[Symbol],
    low: int,
    high: int,
    owner: int,
    enclosing: str | None,
    lines: Sequence[str],
    out: list[Tile],
) -> None:
    """Tile lines ``low..high`` holding ``symbols`` (gaps become blocks)."""
    cursor = low
    for symbol in sorted(symbols, key=lambda s: s.start_line):
        start, end = max(symbol.start_line, cursor), min(symbol.end_line, high)
        if start > end:
            continue  # overlaps what is tiled already
        _block(cursor, start - 1, owner, enclosing, lines, out)
        if _splits(symbol, start, end, lines):
            head = _signature_end(symbol, start, end, lines)
            out.append(Tile(start, head, "sig", symbol.fq_name, symbol.name, owner))
            _cover(symbol.children, head + 1, end, len(out) - 1, symbol.fq_name, lines, out)
        else:
            for a, b in _windows(start, end):
                out.append(Tile(a, b, "def", symbol.fq_name, symbol.name, owner))
        cursor = end + 1
    _block(cursor, high, owner, enclosing, lines, out)


def _splits(symbol: Symbol, start: int, end: int, lines: Sequence[str]) -> bool:
    if not symbol.children or symbol.kind in _SPLIT_KINDS:
        return False
    return sum(len(line) for line in lines[start - 1 : end]) > 4 * SPLIT_TOKENS


def _signature_end(symbol: Symbol, start: int, end: int, lines: Sequence[str]) -> int:
    """The last line of a definition's signature (after its decorators, brackets closed)."""
    first = symbol.children[0].start_line - 1 if symbol.children else end
    stop = min(end, max(start, first), start + 12)
    line = start
    head = symbol.signature.strip()[:24]
    while line < stop and head and not lines[line - 1].strip().startswith(head):
        line += 1  # decorators, comments
    if line >= stop:
        return start
    depth = 0
    for number in range(line, stop + 1):
        text = lines[number - 1]
        depth += text.count("(") + text.count("[") - text.count(")") - text.count("]")
        if depth <= 0:
            return number
    return line


def _block(
    low: int, high: int, owner: int, enclosing: str | None, lines: Sequence[str], out: list[Tile]
) -> None:
    while low <= high and not lines[low - 1].strip():
        low += 1
    while high >= low and not lines[high - 1].strip():
        high -= 1
    for a, b in _windows(low, high):
        out.append(Tile(a, b, "block", enclosing, None, owner))


def _windows(low: int, high: int) -> Iterator[tuple[int, int]]:
    if high - low + 1 <= MAX_TILE_LINES:
        if low <= high:
            yield low, high
        return
    for a in range(low, high + 1, WINDOW_LINES):
        yield a, min(high, a + WINDOW_LINES - 1)


def gap_end(tiles: Sequence[Tile], index: int, line_count: int) -> int:
    """The last line of tile ``index`` with the blank lines after it (up to the next tile)."""
    return tiles[index + 1].start - 1 if index + 1 < len(tiles) else line_count


def _spans(tiles: Sequence[Tile], lines: Sequence[str]) -> list[bytes]:
    """Per tile: the digest of its text with the blank lines after it."""
    spans: list[bytes] = []
    for i, tile in enumerate(tiles):
        text = "".join(lines[tile.start - 1 : gap_end(tiles, i, len(lines))])
        spans.append(hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest())
    return spans


def run_receipt(
    repo_id: str, path: str, tiles: Sequence[Tile], lines: Sequence[str], first: int, last: int
) -> str:
    """The receipt of the run of ``tiles[first..last]`` (bound to its text)."""
    spans = _spans(tiles, lines)[first : last + 1]
    run = hashlib.sha256()
    for span in spans:
        run.update(span)
    return receipt(repo_id, path, run.hexdigest(), "slice", str(tiles[first].start))


def run_receipts(
    repo_id: str, path: str, tiles: Sequence[Tile], lines: Sequence[str], wanted: frozenset[str]
) -> dict[str, tuple[int, int]]:
    """The runs of ``tiles`` (up to :data:`MAX_RUN_TILES` long) whose receipt is ``wanted``."""
    if not wanted:
        return {}
    spans = _spans(tiles, lines)
    found: dict[str, tuple[int, int]] = {}
    for first in range(len(tiles)):
        run = hashlib.sha256()
        key = str(tiles[first].start)
        for last in range(first, min(len(tiles), first + MAX_RUN_TILES)):
            run.update(spans[last])
            mark = receipt(repo_id, path, run.hexdigest(), "slice", key)
            if mark in wanted:
                found[mark] = (first, last)
    return found
