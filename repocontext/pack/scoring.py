"""How much each tile of the ranked files is worth to a task.

Every tile (see :mod:`repocontext.pack.units`) of the candidate files is scored like a small
document: BM25 over the task's terms and the identifiers it spells out whole (k1 1.2, b 0.5,
lengths in characters; a term's weight is its inverse frequency among all the candidate
tiles, so words every tile has count little), plus a bonus for each task term in the tile's
own name, plus a bonus when the tile overlaps the range the search anchored the file on (its
best symbol or semantic chunk).
Then the second choices: tiles of the files linked to the best-ranked files (callers that
name their symbols, callees defining the names they use, covering tests) gain a share of
what the best tile of the file they are linked to is worth. A tile's value is its score,
plus a small base every tile has (filler for a budget that holds more), times its file's
weight (its rank, and its search score relative to the best file's), plus the tile's part of
the file's share: a file is worth something as a whole too, since the lines a change touches
need not be where the task's words are, and its tiles divide that share by their scores and
their sizes. So once a well-ranked file's best definitions are in, the rest of it competes
with the scraps of files far down the ranking, and a large budget sends the first files
whole.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from repocontext.pack.units import Tile
from repocontext.search.terms import split_identifier

__all__ = [
    "LINK_SHARE",
    "Linked",
    "Scored",
    "query_terms",
    "score_file",
    "term_counts",
    "term_weights",
]

K1: Final = 1.2
B: Final = 0.5
NAME_WEIGHT: Final = 2.0
"""A task term in a tile's own name counts this many times its weight."""
ANCHOR_SHARE: Final = 0.5
"""The bonus of the tile the search anchored its file on, as a share of the best term weight."""
BASE_SHARE: Final = 0.05
"""The value every tile has, as a share of the mean term weight (what fills a budget)."""
RANK_DECAY: Final = 0.5
"""The weight of the file at rank r (0-based) is ``1 / (1 + RANK_DECAY * r)``, times its
search score over the best file's to the power :data:`SCORE_POWER`."""
SCORE_POWER: Final = 1.0
FILE_SHARE: Final = 20.0
"""A file's share, in best term weights times the file's weight, divided among its tiles."""
SHARE_BY_SCORE: Final = 0.7
"""The part of a file's share its tiles divide by their scores (the rest by their sizes)."""
LINK_SHARE: Final = 0.05
"""What a linked tile gains, as a share of the best tile value of the file it is linked to."""
EXACT_WEIGHT: Final = 3.0
"""A tile whose name is an identifier the task spells out whole (``test_request_context``)
gains this many times the best term weight."""
TEST_SHARE: Final = 0.4
"""Tests are second choices: a test file's weight is this share of its rank's."""
SIG_SHARE: Final = 0.25
"""A class signature tile is worth this share of its score (its members are the code)."""
_STOP_WORDS: Final = (
    "a an and are as at be by can do does for from has have if in into is it its not of on "
    "or so than that the this to was we when which while will with without"
)
_STOP: Final = frozenset(_STOP_WORDS.split())
_WORD: Final = re.compile(r"[A-Za-z0-9_]+")


@dataclass(frozen=True, slots=True)
class Scored:
    """The tiles of one file, scored.

    Attributes:
        values: Per tile, what it is worth (already weighted by the file's rank).
        reasons: Per tile, the one-word reason it would be chosen for.
        best: The highest value of a tile with a term match (0: none).
    """

    values: tuple[float, ...]
    reasons: tuple[str, ...]
    best: float


@dataclass(frozen=True, slots=True)
class Linked:
    """A second-choice link into a file: the names to look for and the reason tag.

    Attributes:
        names: Symbol names the link is about.
        reason: ``caller``, ``callee`` or ``test``.
        value: What a tile the link reaches gains.
    """

    names: frozenset[str]
    reason: str
    value: float


def query_names(task: str) -> frozenset[str]:
    """Identifiers the task spells out whole (two parts or more), lowercased."""
    return frozenset(
        word.lower().strip("_")
        for word in _WORD.findall(task)
        if len(split_identifier(word)) > 1 and len(word) > 3
    )


def query_terms(task: str) -> list[str]:
    """The task's search terms: identifier parts, lowercased, without stop words."""
    found: dict[str, None] = {}
    for word in _WORD.findall(task):
        for part in split_identifier(word):
            if (len(part) > 1 or part.isdigit()) and part not in _STOP:
                found[part] = None
    return list(found)[:64]


def matcher(terms: Sequence[str]) -> re.Pattern[str] | None:
    """One pattern finding the ``terms`` in lowercased text (boundaries checked after)."""
    if not terms:
        return None
    return re.compile("|".join(re.escape(t) for t in sorted(terms, key=len, reverse=True)))


def _bounded(text: str, start: int, end: int) -> bool:
    """A match that is a whole identifier part, as ``split_identifier`` splits words.

    ``json`` is one in ``to_json``, ``JSONProvider`` and ``json2``, not in ``jsonify``;
    ``server`` in ``HTTPServer``.
    """
    first, last = text[start], text[end - 1]
    if start > 0:
        before = text[start - 1]
        if first.isdigit():
            if before.isdigit():
                return False
        elif before.isalpha() and not (
            (before.islower() and first.isupper())
            or (before.isupper() and first.isupper() and text[start + 1 : start + 2].islower())
        ):
            return False
    if end < len(text):
        after = text[end]
        if (after.isdigit() and last.isdigit()) or (after.islower() and last.isalpha()):
            return False
    return True


def term_counts(
    text: str, spans: Sequence[tuple[int, int]], pattern: re.Pattern[str] | None
) -> list[dict[str, int]]:
    """Per span of ``text`` (a tile's characters), how often each term occurs in it.

    The search runs once over the lowercased text (much faster than a case-insensitive
    pattern); where lowercasing changes the length (a few Unicode letters), spans are
    searched one by one.
    """
    counts: list[dict[str, int]] = [{} for _ in spans]
    if pattern is None or not spans:
        return counts
    lowered = text.lower()
    if len(lowered) != len(text):
        for i, (a, b) in enumerate(spans):
            counts[i] = term_counts(text[a:b], [(0, b - a)], pattern)[0]
        return counts
    starts = [a for a, _ in spans]
    for match in pattern.finditer(lowered):
        start, end = match.span()
        i = bisect.bisect_right(starts, start) - 1
        if i < 0 or end > spans[i][1] or not _bounded(text, start, end):
            continue
        term = match.group()
        counts[i][term] = counts[i].get(term, 0) + 1
    return counts


def term_weights(
    counts: Sequence[Sequence[dict[str, int]]], terms: Sequence[str]
) -> dict[str, float]:
    """Each term's inverse frequency among all the tiles of all the candidate files."""
    tiles = sum(len(per_file) for per_file in counts) or 1
    seen = dict.fromkeys(terms, 0)
    for per_file in counts:
        for tile in per_file:
            for term in tile:
                seen[term] = seen.get(term, 0) + 1
    return {t: math.log(1 + (tiles - n + 0.5) / (n + 0.5)) for t, n in seen.items()}


def score_file(
    tiles: Sequence[Tile],
    sizes: Sequence[int],
    counts: Sequence[dict[str, int]],
    weights: dict[str, float],
    rank: int,
    anchor: tuple[int, int] | None,
    links: Sequence[Linked] = (),
    texts: Sequence[str] = (),
    *,
    names: frozenset[str] = frozenset(),
    is_test: bool = False,
    relative: float = 1.0,
) -> Scored:
    """Score the tiles of the file at ``rank`` (see the module docstring).

    ``relative`` is the file's search score over the best candidate's.
    """
    mean_weight = sum(weights.values()) / len(weights) if weights else 1.0
    top_weight = max(weights.values(), default=1.0)
    average = sum(sizes) / len(sizes) if sizes else 1.0
    file_weight = (TEST_SHARE if is_test else 1.0) / (1.0 + RANK_DECAY * rank)
    file_weight *= max(relative, 0.0) ** SCORE_POWER
    values: list[float] = []
    reasons: list[str] = []
    scores: list[float] = []
    best = 0.0
    for i, tile in enumerate(tiles):
        norm = K1 * (1 - B + B * sizes[i] / average)
        content = sum(weights.get(t, 0.0) * n * (K1 + 1) / (n + norm) for t, n in counts[i].items())
        name = 0.0
        if tile.name:
            parts = {p for p in split_identifier(tile.name) if len(p) > 1}
            name = NAME_WEIGHT * sum(weights.get(p, 0.0) for p in parts if p in weights)
            if tile.name.lower() in names:
                name += EXACT_WEIGHT * top_weight
        near = 0.0
        if anchor and tile.start <= anchor[1] and anchor[0] <= tile.end:
            near = ANCHOR_SHARE * top_weight
        linked, link_reason = _linked(tile, links, texts[i] if texts else "")
        parts_of = {"name-match": name, "content-match": content, "semantic": near}
        reason = max(parts_of, key=lambda k: parts_of[k])
        score = name + content + near
        if tile.kind == "sig":
            score *= SIG_SHARE  # a class's members carry what its name promises
        if linked > score:
            reason = link_reason
        value = file_weight * (score + BASE_SHARE * mean_weight) + linked
        if score <= 0 and linked <= 0:
            reason = "context"
        elif score > 0:
            best = max(best, file_weight * score)
        values.append(value)
        reasons.append(reason)
        scores.append(score)
    share = FILE_SHARE * top_weight * file_weight
    divided = file_parts(scores, sizes)
    values = [value + share * part for value, part in zip(values, divided, strict=True)]
    return Scored(tuple(values), tuple(reasons), best)


def file_parts(scores: Sequence[float], sizes: Sequence[int]) -> list[float]:
    """How the tiles of a file divide its share (the parts sum to 1).

    :data:`SHARE_BY_SCORE` of it by their scores (all by their sizes when no tile matches the
    task), the rest by their sizes.
    """
    total = sum(scores)
    length = sum(sizes) or 1
    by_score = SHARE_BY_SCORE if total > 0 else 0.0
    return [
        by_score * (score / total if total > 0 else 0.0) + (1 - by_score) * size / length
        for score, size in zip(scores, sizes, strict=True)
    ]


def _linked(tile: Tile, links: Sequence[Linked], text: str) -> tuple[float, str]:
    """What a tile gains from the second-choice links into its file, and the reason."""
    gain, reason = 0.0, ""
    for link in links:
        if tile.kind == "sig":
            continue
        if link.reason == "callee":
            hit = tile.name is not None and tile.name in link.names
        else:
            hit = any(name in text for name in link.names)
        if hit and link.value > gain:
            gain, reason = link.value, link.reason
    return gain, reason
