"""The wire form of entries, as recall, scan, remember and update send them.

A memory entry and an entry of any other key share one shape (``EntryResult``); the fields a
family does not have are ``null``.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import Field, JsonValue

from repocontext.entries import Entry, EntryPage
from repocontext.memory import EntryClaim, MemoryEntry, StaleLink
from repocontext.store import Value
from repocontext.wire._base import WireModel

__all__ = ["EntryClaimResult", "EntryResult", "ScanResult", "StaleLinkResult"]


class StaleLinkResult(WireModel):
    """A link of a memory entry whose target drifted (``changed``) or is gone (``missing``)."""

    relation: str
    key: str
    reason: str

    @classmethod
    def of(cls, link: StaleLink) -> StaleLinkResult:
        """Build the wire form of a :class:`~repocontext.memory.StaleLink`."""
        return cls(relation=link.relation, key=link.key, reason=link.reason)


class EntryClaimResult(WireModel):
    """The claim of a memory entry as its entry view shows it."""

    claimed: bool
    owner: str | None
    fencing_token: int
    lease_expires_at: float | None
    released: bool

    @classmethod
    def of(cls, claim: EntryClaim) -> EntryClaimResult:
        """Build the wire form of an :class:`~repocontext.memory.EntryClaim`."""
        return cls(
            claimed=claim.claimed,
            owner=claim.owner,
            fencing_token=claim.fencing_token,
            lease_expires_at=claim.lease_expires_at,
            released=claim.released,
        )


class EntryResult(WireModel):
    """One entry view (``repocontext_recall``, and each entry of ``repocontext_scan``)."""

    key: str
    exists: bool
    kind: str
    repo_id: str
    path: str | None = None
    fully_qualified_name: str | None = None
    topic: str | None = None
    id: str | None = None
    fields: dict[str, JsonValue] = Field(default_factory=dict)
    tags: list[str] | None = None
    links: dict[str, list[str]] | None = None
    version: int | None = None
    expires_at: float | None = None
    remaining_seconds: float | None = None
    stale: bool | None = None
    stale_links: list[StaleLinkResult] | None = None
    claim: EntryClaimResult | None = None

    @classmethod
    def of(cls, entry: Entry) -> EntryResult:
        """Build the wire form of an entry of any key."""
        if isinstance(entry, MemoryEntry):
            return cls._of_memory(entry)
        return cls(
            key=entry.key,
            exists=entry.exists,
            kind=entry.kind,
            repo_id=entry.repo_id,
            path=entry.path,
            fully_qualified_name=entry.fully_qualified_name,
            fields=_json(entry.fields),
            version=entry.version,
            expires_at=entry.expires_at,
        )

    @classmethod
    def _of_memory(cls, entry: MemoryEntry) -> EntryResult:
        if not entry.exists:
            return cls(
                key=entry.key, exists=False, kind="memory", repo_id=entry.repo_id,
                topic=entry.topic, id=entry.id,
            )  # fmt: skip
        return cls(
            key=entry.key, exists=True, kind="memory", repo_id=entry.repo_id,
            topic=entry.topic, id=entry.id,
            fields=_json(entry.fields),
            tags=list(entry.tags),
            links={relation: list(keys) for relation, keys in entry.links.items()},
            version=entry.version,
            expires_at=entry.expires_at,
            remaining_seconds=entry.remaining_seconds,
            stale=entry.stale,
            stale_links=[StaleLinkResult.of(link) for link in entry.stale_links] or None,
            claim=None if entry.claim is None else EntryClaimResult.of(entry.claim),
        )  # fmt: skip


class ScanResult(WireModel):
    """Result of ``repocontext_scan``."""

    entries: list[EntryResult]
    continuation_token: str | None = None

    @classmethod
    def of(cls, page: EntryPage) -> ScanResult:
        """Build the wire form of an :class:`~repocontext.entries.EntryPage`."""
        return cls(
            entries=[EntryResult.of(entry) for entry in page.entries],
            continuation_token=page.continuation_token,
        )


def _json(fields: Mapping[str, Value]) -> dict[str, JsonValue]:
    return {name: _json_value(value) for name, value in fields.items()}


def _json_value(value: Value) -> JsonValue:
    """A store value as JSON: bytes (which JSON lacks) as text."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, list):
        return [_json_value(item) for item in value]
    if isinstance(value, dict):
        return _json(value)
    return value
