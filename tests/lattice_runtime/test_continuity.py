"""The continuity projection: frozen at the latest boundary, anchors only, capped, off mode."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from lattice_runtime.errors import SessionError
from lattice_runtime.session import (
    MAX_PROJECTION_BYTES,
    Journal,
    SessionStore,
    canonical_json,
    continuity_projection,
    sha256_text,
)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    return tmp_path


@pytest.fixture
def sid(root: Path) -> str:
    return SessionStore(root).new().id


def sections(journal: Journal, session_id: str) -> dict[str, Any]:
    wire = continuity_projection(journal, session_id).to_wire()
    assert isinstance(wire["sections"], dict)
    return wire["sections"]


def test_before_any_boundary_the_projection_adds_nothing(root: Path, sid: str) -> None:
    journal = Journal(root)
    journal.record_message(sid, "m-1", "hello")
    journal.approve_plan(sid, "p-1", "the plan")
    projection = continuity_projection(journal, sid)
    assert projection.boundary_kind is None
    assert projection.to_wire()["boundary"] is None
    assert sections(journal, sid) == {
        "hiddenMessages": [],
        "firstMessage": None,
        "plan": None,
        "todos": [],
        "delegatedResults": [],
    }


def test_a_compaction_hides_earlier_messages_as_anchors_without_their_text(
    root: Path, sid: str
) -> None:
    journal = Journal(root)
    journal.record_message(sid, "m-1", "secret wording one")
    journal.record_message(sid, "m-2", "secret wording two")
    journal.boundary(sid, "compaction")
    journal.record_message(sid, "m-3", "after the compaction")
    projection = continuity_projection(journal, sid)
    assert projection.to_wire()["boundary"] == {"kind": "compaction", "sequence": 3}
    assert sections(journal, sid)["hiddenMessages"] == [
        {"id": "m-1", "digest": sha256_text("secret wording one"), "sequence": 1},
        {"id": "m-2", "digest": sha256_text("secret wording two"), "sequence": 2},
    ]
    assert b"secret wording" not in projection.canonical()


def test_the_projection_is_frozen_at_the_boundary_until_the_next_one(root: Path, sid: str) -> None:
    journal = Journal(root)
    journal.record_message(sid, "m-1", "first")
    journal.set_todos(sid, ("write tests",))
    journal.boundary(sid, "compaction")
    frozen = continuity_projection(journal, sid).canonical()
    journal.record_message(sid, "m-2", "second")
    journal.set_todos(sid, ("ship",))
    journal.approve_plan(sid, "p-1", "a plan after the boundary")
    assert continuity_projection(journal, sid).canonical() == frozen
    assert continuity_projection(Journal(root), sid).canonical() == frozen
    journal.boundary(sid, "resume")
    moved = sections(journal, sid)
    assert [anchor["id"] for anchor in moved["hiddenMessages"]] == ["m-1", "m-2"]
    assert moved["todos"] == ["ship"]
    assert moved["plan"]["id"] == "p-1"


def test_a_resume_hides_earlier_messages_and_a_delegation_hides_none(root: Path, sid: str) -> None:
    journal = Journal(root)
    journal.record_message(sid, "m-1", "before")
    journal.delegate(sid, "m-2", "sub-agent prompt")
    assert sections(journal, sid)["hiddenMessages"] == []
    assert continuity_projection(journal, sid).boundary_kind == "delegation"
    journal.boundary(sid, "resume")
    assert [a["id"] for a in sections(journal, sid)["hiddenMessages"]] == ["m-1"]


def test_the_latest_plan_and_the_current_todo_list_replace_earlier_ones(
    root: Path, sid: str
) -> None:
    journal = Journal(root)
    journal.approve_plan(sid, "p-1", "old plan")
    journal.approve_plan(sid, "p-2", "new plan")
    journal.set_todos(sid, ("a", "b"))
    journal.set_todos(sid, ("c",))
    journal.boundary(sid, "compaction")
    got = sections(journal, sid)
    assert got["plan"] == {"id": "p-2", "text": "new plan", "digest": sha256_text("new plan")}
    assert got["todos"] == ["c"]


def test_only_the_last_three_delegated_results_are_projected(root: Path, sid: str) -> None:
    journal = Journal(root)
    for number in range(1, 6):
        journal.record_delegated(sid, f"prompt {number}", f"result {number}")
    journal.boundary(sid, "compaction")
    results = sections(journal, sid)["delegatedResults"]
    assert [r["result"] for r in results] == ["result 3", "result 4", "result 5"]
    assert results[0]["promptDigest"] == sha256_text("prompt 3")
    assert results[0]["resultDigest"] == sha256_text("result 3")
    assert b"prompt 3" not in continuity_projection(journal, sid).canonical()


def test_a_child_session_projects_the_anchor_of_its_first_message(root: Path, sid: str) -> None:
    journal = Journal(root)
    _, child = journal.delegate(sid, "m-7", "refactor the lexer, keep behaviour")
    projection = continuity_projection(journal, child)
    assert projection.parent_session_id == sid
    assert projection.boundary_kind == "delegation"
    got = sections(journal, child)
    assert got["firstMessage"] == {
        "id": "m-7",
        "digest": sha256_text("refactor the lexer, keep behaviour"),
    }
    assert b"refactor the lexer" not in projection.canonical()


def test_a_section_over_the_cap_is_replaced_by_its_sha256_and_a_note(root: Path, sid: str) -> None:
    journal = Journal(root)
    big_plan = "p" * 200_000
    journal.approve_plan(sid, "p-1", big_plan)
    journal.set_todos(sid, tuple(f"todo {n} " + "t" * 1000 for n in range(100)))
    journal.record_message(sid, "m-1", "small")
    journal.boundary(sid, "compaction")
    projection = continuity_projection(journal, sid)
    data = projection.canonical()
    assert len(data) <= MAX_PROJECTION_BYTES
    assert projection.omitted == ("plan",)
    plan_body = canonical_json({"id": "p-1", "text": big_plan, "digest": sha256_text(big_plan)})
    got = sections(journal, sid)
    assert got["plan"]["sha256"] == "sha256:" + hashlib.sha256(plan_body).hexdigest()
    assert got["plan"]["bytes"] == len(plan_body)
    assert "did not fit" in got["plan"]["note"]
    assert len(got["todos"]) == 100
    assert continuity_projection(journal, sid).canonical() == data


def test_sections_are_replaced_largest_first_until_the_projection_fits(
    root: Path, sid: str
) -> None:
    journal = Journal(root)
    journal.approve_plan(sid, "p-1", "p" * 160_000)
    journal.set_todos(sid, tuple("t" * 1000 for _ in range(150)))
    for number in range(3):
        journal.record_delegated(sid, "q", "r" * 40_000 + str(number))
    journal.boundary(sid, "compaction")
    projection = continuity_projection(journal, sid)
    assert projection.omitted == ("plan", "todos")
    assert len(projection.canonical()) <= MAX_PROJECTION_BYTES
    wire = json.loads(projection.canonical())
    assert len(wire["sections"]["delegatedResults"]) == 3


def test_off_mode_refuses_the_projection_with_a_session_error(root: Path, sid: str) -> None:
    with pytest.raises(SessionError) as caught:
        continuity_projection(Journal(root), sid, mode="off")
    assert caught.value.code == "lattice.session"
    assert "--control auto" in caught.value.hint
    assert not (root / ".lattice" / "journal").exists()


def test_a_journal_in_off_mode_refuses_every_call_and_writes_nothing(root: Path, sid: str) -> None:
    journal = Journal(root, mode="off")
    calls = [
        lambda: journal.record_message(sid, "m-1", "hi"),
        lambda: journal.boundary(sid, "compaction"),
        lambda: journal.delegate(sid, "m-2", "go"),
        lambda: journal.entries(sid),
        lambda: continuity_projection(journal, sid),
    ]
    for attempt in calls:
        with pytest.raises(SessionError) as caught:
            attempt()
        assert caught.value.code == "lattice.session"
    assert not (root / ".lattice" / "journal").exists()
