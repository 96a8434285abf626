"""Choosing the code of a bundle: whole files and tiles, best value per token first.

The candidates are the ranked files (:class:`Candidate`: node, text, tiles, what the caller
already holds). :func:`choose` takes, greedily by value per token (see
:mod:`repocontext.pack.scoring`), tiles across all files and whole files, under a room of
tokens estimated for the response: a tile costs its exact tokens plus the header and the
metadata of a new unit (nothing more when it extends a run already chosen), the first tile
of a file also its entry's metadata; a member of a split class brings its class's signature
(``enclosing``); a whole file replaces what was chosen of it and competes with the value of
all its tiles (a bonus over their sum: it is whole). The picks come in the order they were
made, so the packer can drop the last ones when the exact count is a little over.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from repocontext.index.model import FileNode
from repocontext.pack.scoring import Scored
from repocontext.pack.units import Tile

__all__ = ["WHOLE", "Candidate", "Pick", "choose", "runs_of"]

WHOLE: Final = -1
"""The tile index of a pick that takes the whole file."""
WHOLE_BONUS: Final = 1.3
"""A whole file is worth this times the sum of its tiles' values (nothing is cut out)."""
UNIT_OVERHEAD: Final = 60
"""Estimated tokens of a unit's header and metadata, beside its path."""
DENSITY_EXP: Final = 1.0
"""Items are taken by ``value / cost ** DENSITY_EXP`` (below 1 would favour larger units; the
files' shares in the values already do, see :mod:`repocontext.pack.scoring`)."""
ENTRY_OVERHEAD: Final = 40
"""Estimated tokens of an entry's metadata, beside its path and reasons."""

Pick = tuple[int, int]
"""(candidate index, tile index or :data:`WHOLE`)."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """A ranked file the bundle may draw code from.

    Attributes:
        rank: 0-based rank in the search result.
        path: Repository-relative path.
        score: The search score.
        reasons: Why the search found it.
        node: Its file node.
        text: Its text (as the search read it).
        lines: ``text`` split into lines (ends kept).
        tiles: Its tiles (:func:`repocontext.pack.units.tiles_of`).
        held: Indices of tiles the caller holds (never sent again).
        anchor: The range the search anchored it on, if any.
        path_tokens: Exact tokens of ``path`` plus its reasons (metadata it costs).
        whole_ok: It may be sent whole (the caller holds none of it).
    """

    rank: int
    path: str
    score: float
    reasons: tuple[str, ...]
    node: FileNode
    text: str
    lines: tuple[str, ...]
    tiles: tuple[Tile, ...]
    held: frozenset[int]
    anchor: tuple[int, int] | None
    path_tokens: int
    whole_ok: bool


def choose(
    candidates: Sequence[Candidate],
    scored: Sequence[Scored],
    tokens: Callable[[int, int], int],
    room: int,
    offers: int | None = None,
) -> list[Pick]:
    """The picks that fit ``room`` estimated tokens, in the order they were made.

    With ``offers``, only the first that many items taken (a tile with its enclosing
    signatures, or a whole file) are returned.
    """
    heap: list[tuple[float, int, int]] = []
    for f, (candidate, score) in enumerate(zip(candidates, scored, strict=True)):
        unit = UNIT_OVERHEAD + candidate.path_tokens
        for t, value in enumerate(score.values):
            if t not in candidate.held and value > 0:
                heap.append((-value / (tokens(f, t) + unit) ** DENSITY_EXP, f, t))
        if candidate.whole_ok and candidate.tiles:
            total = WHOLE_BONUS * sum(score.values)
            heap.append((-total / (tokens(f, WHOLE) + unit) ** DENSITY_EXP, f, WHOLE))
    heapq.heapify(heap)
    state = _State(candidates, tokens)
    taken = 0
    while heap and (offers is None or taken < offers):
        _, f, t = heapq.heappop(heap)
        taken += state.offer(f, t, room)
    if offers is None:
        state.bridge(room)
    return state.picks


class _State:
    """What has been chosen so far, and what it is estimated to cost."""

    def __init__(self, candidates: Sequence[Candidate], tokens: Callable[[int, int], int]) -> None:
        self.candidates = candidates
        self.tokens = tokens
        self.picks: list[Pick] = []
        self.chosen: dict[int, set[int]] = {}
        self.whole: set[int] = set()
        self.spent = 0
        self.per_file: dict[int, int] = {}

    def offer(self, f: int, t: int, room: int) -> int:
        """Take tile ``t`` of file ``f`` (or the whole file) when it fits ``room`` (1: taken)."""
        if f in self.whole:
            return 0
        candidate = self.candidates[f]
        unit = UNIT_OVERHEAD + candidate.path_tokens
        entry = 0 if f in self.per_file else ENTRY_OVERHEAD + candidate.path_tokens
        if t == WHOLE:
            cost = self.tokens(f, WHOLE) + unit + entry - self.per_file.get(f, 0)
            if self.spent + cost <= room:
                self.whole.add(f)
                self.picks.append((f, WHOLE))
                self.spent += cost
                self.per_file[f] = self.per_file.get(f, 0) + cost
                return 1
            return 0
        chosen = self.chosen.setdefault(f, set())
        if t in chosen:
            return 0
        needed = [t]
        owner = candidate.tiles[t].owner
        while owner >= 0 and owner not in chosen and owner not in candidate.held:
            needed.append(owner)
            owner = candidate.tiles[owner].owner
        cost = entry
        taken = set(chosen)
        for tile in reversed(needed):
            adjacent = tile - 1 in taken or tile + 1 in taken
            cost += self.tokens(f, tile) + (0 if adjacent else unit)
            taken.add(tile)
        if self.spent + cost > room:
            return 0
        for tile in reversed(needed):
            chosen.add(tile)
            self.picks.append((f, tile))
        self.spent += cost
        self.per_file[f] = self.per_file.get(f, 0) + cost
        return 1

    def bridge(self, room: int) -> None:
        """Join runs of a file separated by tiles that cost less than the header they save."""
        for f, chosen in self.chosen.items():
            if f in self.whole:
                continue
            candidate = self.candidates[f]
            unit = UNIT_OVERHEAD + candidate.path_tokens
            runs = runs_of(chosen)
            for (_, end), (start, _) in itertools.pairwise(runs):
                gap = range(end + 1, start)
                if any(t in candidate.held for t in gap):
                    continue
                cost = sum(self.tokens(f, t) for t in gap) - unit
                if cost <= 0 or (cost <= unit and self.spent + cost <= room):
                    for t in gap:
                        chosen.add(t)
                        self.picks.append((f, t))
                    self.spent += cost


def runs_of(tiles: Iterable[int]) -> list[tuple[int, int]]:
    """Consecutive tile indices grouped into ``(first, last)`` runs, in order."""
    runs: list[tuple[int, int]] = []
    for tile in sorted(set(tiles)):
        if runs and tile == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], tile)
        else:
            runs.append((tile, tile))
    return runs
