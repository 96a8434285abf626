"""The registration record of a repository (``repo/{id}`` in the structural tree)."""

from __future__ import annotations

from typing import Any

from repocontext.errors import InvalidKeyError
from repocontext.store.keys import repo_key
from repocontext.store.store import Store
from repocontext.store.trees import STRUCTURAL

__all__ = ["repo_record"]


def repo_record(store: Store, repo_id: str) -> dict[str, Any] | None:
    """A copy of ``repo_id``'s registration record, or ``None`` when none is registered.

    An id no key can hold (empty, too long, control characters) is simply not registered.
    """
    try:
        record = store.get(STRUCTURAL, repo_key(repo_id))
    except InvalidKeyError:
        return None
    return dict(record.value) if record is not None and isinstance(record.value, dict) else None
