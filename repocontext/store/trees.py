"""The named trees of the store and the merge mode each declares.

A tree is an LMDB sub-database. Its merge mode decides how two versions of one record combine:

* ``DOC`` — a pycrdt document with typed fields (LWW scalars, add-wins sets, max-registers);
  used where several writers change different fields of one record (memory, sessions).
* ``LWW`` — a last-writer-wins envelope ordered by (hybrid logical clock, replica id); used
  where one writer (the indexer) replaces whole values.
* ``FLAG`` — an observed-remove flag; used for vector membership.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final

from repocontext.errors import UnknownTreeError

__all__ = [
    "CONTENT",
    "MEMORY",
    "SESSION",
    "STRUCTURAL",
    "SYMBOL",
    "TREES",
    "VECTOR_MEMBERSHIP",
    "VECTOR_METADATA",
    "VECTOR_PAYLOAD",
    "XREF",
    "MergeMode",
    "TreeSpec",
    "tree_spec",
]


class MergeMode(enum.Enum):
    """How concurrent versions of one record combine."""

    DOC = "doc"
    LWW = "lww"
    FLAG = "flag"


@dataclass(frozen=True, slots=True)
class TreeSpec:
    """One named tree.

    Attributes:
        name: The LMDB sub-database name (part of the stored format).
        tag: One-byte id used inside index keys (part of the stored format).
        mode: The merge mode of every record in the tree.
        of_record: True for the store of record; False for rebuildable projections.
    """

    name: str
    tag: int
    mode: MergeMode
    of_record: bool


STRUCTURAL: Final = "repo-context-structural"
SYMBOL: Final = "repo-context-symbol"
CONTENT: Final = "repo-context-content"
XREF: Final = "repo-context-xref"
MEMORY: Final = "repo-context-memory"
SESSION: Final = "repo-context-session"
VECTOR_MEMBERSHIP: Final = "repo-context-vector-membership"
VECTOR_PAYLOAD: Final = "repo-context-vector-payload"
VECTOR_METADATA: Final = "repo-context-vector-metadata"

TREES: Final[dict[str, TreeSpec]] = {
    spec.name: spec
    for spec in (
        TreeSpec(STRUCTURAL, 1, MergeMode.LWW, of_record=True),
        TreeSpec(SYMBOL, 2, MergeMode.LWW, of_record=True),
        TreeSpec(CONTENT, 3, MergeMode.LWW, of_record=False),
        TreeSpec(XREF, 4, MergeMode.LWW, of_record=False),
        TreeSpec(MEMORY, 5, MergeMode.DOC, of_record=True),
        TreeSpec(SESSION, 6, MergeMode.DOC, of_record=False),
        TreeSpec(VECTOR_MEMBERSHIP, 7, MergeMode.FLAG, of_record=False),
        TreeSpec(VECTOR_PAYLOAD, 8, MergeMode.LWW, of_record=False),
        TreeSpec(VECTOR_METADATA, 9, MergeMode.LWW, of_record=False),
    )
}
"""Every named tree, by name."""

TREES_BY_TAG: Final[dict[int, TreeSpec]] = {spec.tag: spec for spec in TREES.values()}


def tree_spec(name: str) -> TreeSpec:
    """Return the spec of a named tree.

    Raises:
        UnknownTreeError: ``name`` is not a named tree.
    """
    try:
        return TREES[name]
    except (KeyError, TypeError):
        raise UnknownTreeError(f"unknown tree {name!r}") from None
