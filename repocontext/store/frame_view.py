"""How a stored frame reads: as a :class:`~repocontext.store.view.Record`, and if it is live."""

from __future__ import annotations

from repocontext.errors import InvalidKeyError
from repocontext.store.document import read_doc
from repocontext.store.records import Envelope, FlagState, Frame
from repocontext.store.trees import MergeMode, TreeSpec
from repocontext.store.view import Record

__all__ = ["live_header", "record_of"]


def record_of(spec: TreeSpec, key: str, frame: Frame) -> Record:
    """The record a frame of ``spec``'s tree stored under ``key`` reads as.

    Raises:
        InvalidKeyError: The frame's state does not match the tree's merge mode.
    """
    mode, version, hlc, expires_ms, deleted, state = frame
    expires = None if expires_ms is None else expires_ms / 1000
    if type(state) is Envelope:
        return Record(spec.name, key, version, hlc, expires, deleted, state.value)
    if mode is MergeMode.DOC and isinstance(state, bytes):
        return Record(spec.name, key, version, hlc, expires, deleted, doc=read_doc(state))
    if isinstance(state, FlagState):
        return Record(spec.name, key, version, hlc, expires, deleted, present=state.present)
    raise InvalidKeyError(f"record {key!r} does not match the mode of {spec.name}")


def live_header(expires_ms: int | None, deleted: bool, now_ms: float) -> bool:
    """A frame with this header is neither deleted nor expired at ``now_ms``."""
    return not deleted and (expires_ms is None or expires_ms > now_ms)
