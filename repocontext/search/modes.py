"""The retrieval mode a caller asks for, and what a search says when vectors cannot answer.

``mode`` (:data:`SEARCH_MODES`): ``keyword`` ranks by words alone (no vectors are read),
``semantic`` by the vectors alone, ``hybrid`` fuses both. Asking for none is hybrid when
vectors can answer and keyword-only otherwise, the fallback saying why in ``retrievalPath``
(:func:`fallback_path`). Asking for ``semantic`` or ``hybrid`` never falls back: when no
vectors can answer it is ``search.vectors_unavailable``, with the reason and what to do.

When the repository's vectors were made by another embedder than the configured one, the
fallback is ``keyword.embedder_mismatch`` and the answer carries a warning naming both and
the fix (:func:`warnings_of`).
"""

from __future__ import annotations

from collections.abc import Set
from typing import Final, Literal

from repocontext.arguments import quoted
from repocontext.errors import InvalidInputError, VectorsUnavailableError
from repocontext.search.semantic import SemanticService
from repocontext.search.vectors import ChunkHit

__all__ = [
    "SEARCH_MODES",
    "SearchMode",
    "checked_mode",
    "fallback_path",
    "nearest_chunks",
    "warnings_of",
]

SearchMode = Literal["keyword", "semantic", "hybrid"]
SEARCH_MODES: Final[tuple[SearchMode, ...]] = ("keyword", "semantic", "hybrid")
MISMATCH: Final = "keyword.embedder_mismatch"
_REQUESTED: Final = "keyword.requested"


def checked_mode(mode: str | None) -> SearchMode | None:
    """Return the mode a caller asked for (``None`` or empty: the default).

    Raises:
        InvalidInputError: The mode is not one of :data:`SEARCH_MODES`.
    """
    if not mode:
        return None
    found = next((m for m in SEARCH_MODES if m == mode), None)
    if found is None:
        raise InvalidInputError(
            f"unknown mode {quoted(mode)}",
            hint=f"Use one of {', '.join(SEARCH_MODES)} (or none: hybrid when vectors are "
            "ready, else keyword).",
        )
    return found


def nearest_chunks(
    semantic: SemanticService | None,
    repo_id: str,
    query: str,
    limit: int,
    mode: SearchMode | None,
    within: Set[str] | None,
) -> list[ChunkHit] | None:
    """The chunks nearest to the query, of the ``within`` paths (and memory entries).

    ``None`` when no vectors answer, or when ``mode`` is ``keyword`` (none are read).
    """
    if semantic is None or mode == "keyword":
        return None
    return semantic.search(repo_id, query, limit, within)


def fallback_path(semantic: SemanticService | None, repo_id: str, mode: SearchMode | None) -> str:
    """The ``retrievalPath`` of an answer no vectors took part in.

    Raises:
        VectorsUnavailableError: ``mode`` asked for vectors (``semantic`` or ``hybrid``).
    """
    if mode == "keyword":
        return _REQUESTED
    stored = semantic.stored_embedder(repo_id) if semantic is not None else None
    if semantic is None or semantic.embedder_name == "off":
        path = "keyword.no_embedder"
    elif stored is not None:  # (before loading the configured embedder: minilm takes seconds)
        path = MISMATCH
    elif not semantic.enabled:
        path = "keyword.no_embedder"
    else:
        path = "keyword.vector_plane_unavailable"
    if mode is not None:
        raise _unavailable(semantic, repo_id, mode, path, stored)
    return path


def warnings_of(
    semantic: SemanticService | None, repo_id: str, path: str = MISMATCH
) -> tuple[str, ...]:
    """What an answer by ``path`` must warn about (nothing, unless embedders disagree).

    The default ``path`` asks what a keyword-only answer would warn about now.
    """
    if path != MISMATCH or semantic is None:
        return ()  # (no store read on the common path)
    stored = semantic.stored_embedder(repo_id)
    if stored is None:
        return ()
    return (
        f"answered by keyword only: the vectors of {repo_id!r} were made with the {stored!r} "
        f"embedder and this process uses {semantic.embedder_name!r}. "
        + _mismatch_fix(stored, semantic.embedder_name),
    )


def _mismatch_fix(stored: str, configured: str) -> str:
    return (
        f"Set REPOCONTEXT_EMBEDDER={stored} (or `serve --embedder {stored}`) to use them, or "
        f"re-embed with this one: `REPOCONTEXT_EMBEDDER={configured} repocontext index PATH` "
        "(any full index run with it re-embeds)."
    )


def _unavailable(
    semantic: SemanticService | None,
    repo_id: str,
    mode: SearchMode,
    path: str,
    stored: str | None,
) -> VectorsUnavailableError:
    asked = f"a {mode} search of {repo_id!r} needs vectors"
    if path == MISMATCH and semantic is not None and stored is not None:
        return VectorsUnavailableError(
            f"{asked}, and its vectors were made with the {stored!r} embedder while this "
            f"process uses {semantic.embedder_name!r}",
            hint=_mismatch_fix(stored, semantic.embedder_name) + " Or ask for mode keyword.",
        )
    if path == "keyword.no_embedder":
        name = semantic.embedder_name if semantic is not None else "off"
        return VectorsUnavailableError(
            f"{asked}, and this process has no embedder (embedder {name!r}"
            + (" could not be loaded)" if name != "off" else ")"),
            hint="Set REPOCONTEXT_EMBEDDER=static (or minilm) and index the repository, "
            "or ask for mode keyword.",
        )
    return VectorsUnavailableError(
        f"{asked}, and they are not ready yet (not embedded, or the first embedding pass "
        "is still running)",
        hint="Wait until `repocontext status` (repocontext_index_status) shows the run "
        "completed and no longer embedding, or ask for mode keyword.",
    )
