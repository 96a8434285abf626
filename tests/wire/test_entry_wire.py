"""The wire form of entries built from the typed values."""

from repocontext.entries import EntryPage, EntryView
from repocontext.memory import EntryClaim, MemoryEntry, StaleLink
from repocontext.wire.entries import EntryResult, ScanResult


def test_a_code_entry_sends_its_fields_as_json_and_no_memory_parts():
    view = EntryView(
        "repo/r/file/a.py",
        exists=True,
        kind="file",
        repo_id="r",
        path="a.py",
        fields={"blobId": "abc", "raw": b"\xffok", "nested": [{"b": b"x"}]},
        version=3,
    )
    wire = EntryResult.of(view).model_dump(mode="json", by_alias=True)
    assert wire["fields"] == {"blobId": "abc", "raw": "\ufffdok", "nested": [{"b": "x"}]}
    assert (wire["repoId"], wire["path"], wire["version"]) == ("r", "a.py", 3)
    assert wire["tags"] is None and wire["claim"] is None and wire["stale"] is None


def test_a_memory_entry_sends_camel_case_claim_and_stale_links():
    entry = MemoryEntry(
        "repo/r/mem/t/1",
        repo_id="r",
        topic="t",
        id="1",
        exists=True,
        kind="note",
        fields={"kind": "note"},
        tags=("x",),
        links={"related": ("repo/r/mem/t/2",)},
        version=5,
        stale_links=(StaleLink("related", "repo/r/mem/t/2", "missing"),),
        claim=EntryClaim(
            claimed=True, owner="a", fencing_token=2, lease_expires_at=9.0, released=False
        ),
    )
    page = ScanResult.of(EntryPage((entry,), "next"))
    wire = page.model_dump(mode="json", by_alias=True)
    [sent] = wire["entries"]
    assert wire["continuationToken"] == "next"
    assert sent["kind"] == "memory" and sent["stale"] is True
    assert sent["staleLinks"] == [
        {"relation": "related", "key": "repo/r/mem/t/2", "reason": "missing"}
    ]
    assert sent["claim"] == {
        "claimed": True,
        "owner": "a",
        "fencingToken": 2,
        "leaseExpiresAt": 9.0,
        "released": False,
    }
    assert sent["links"] == {"related": ["repo/r/mem/t/2"]} and sent["tags"] == ["x"]
