"""The session journal under .lattice/journal: durability, sequences, boundaries, children."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from lattice_runtime.compile import compile_task
from lattice_runtime.errors import SessionError, SessionNotFoundError
from lattice_runtime.session import (
    BoundaryReported,
    ChildOf,
    DelegatedResult,
    Entry,
    GrantIssued,
    HumanMessage,
    Journal,
    PatchProposed,
    PlanApproved,
    SessionStore,
    TaskAccepted,
    TodoList,
    VerificationOutcome,
    entry_record,
    sha256_text,
)
from lattice_runtime.session.journal_entries import entry_from_record
from repocontext.store import STRUCTURAL, Store
from tests.lattice_runtime.fixture_repos import PY_GOAL, make_repo

NOON = datetime(2026, 3, 4, 12, 0, tzinfo=UTC)


def repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    return tmp_path


def journal(root: Path) -> Journal:
    return Journal(root, now=lambda: NOON, token=lambda n: "c0ffee" * (n // 3))


def session(root: Path) -> str:
    return SessionStore(root).new().id


def test_entries_survive_a_store_reopen_in_another_process(tmp_path: Path) -> None:
    root = repo(tmp_path)
    sid = session(root)
    script = (
        "import sys; from pathlib import Path; from lattice_runtime.session import Journal; "
        "j = Journal(Path(sys.argv[1])); j.record_message(sys.argv[2], 'm-1', 'keep the API'); "
        "j.boundary(sys.argv[2], 'compaction')"
    )
    subprocess.run([sys.executable, "-c", script, str(root), sid], check=True, env=dict(os.environ))
    entries = Journal(root).entries(sid)
    assert [entry.sequence for entry in entries] == [1, 2]
    assert entries[0].payload == HumanMessage("m-1", sha256_text("keep the API"), "keep the API")
    assert entries[1].payload == BoundaryReported("compaction")
    assert (root / ".lattice" / "journal" / "store").is_dir()
    assert not (root / ".lattice" / "index").exists()


def test_sequence_numbers_count_up_per_session_and_carry_the_time(tmp_path: Path) -> None:
    root = repo(tmp_path)
    first, second = session(root), session(root)
    log = journal(root)
    log.record_message(first, "m-1", "one")
    log.record_message(second, "m-1", "other")
    log.set_todos(first, ("a", "b"))
    log.approve_plan(first, "p-1", "do a then b")
    assert [e.sequence for e in log.entries(first)] == [1, 2, 3]
    assert [e.sequence for e in log.entries(second)] == [1]
    assert {e.at for e in log.entries(first)} == {"2026-03-04T12:00:00Z"}
    assert [e.sequence for e in log.entries(first, upto=2)] == [1, 2]


def test_every_boundary_kind_is_recorded(tmp_path: Path) -> None:
    root = repo(tmp_path)
    sid = session(root)
    log = journal(root)
    log.boundary(sid, "compaction")
    log.boundary(sid, "resume")
    entry, child = log.delegate(sid, "m-9", "review the parser")
    kinds = [e.payload for e in log.entries(sid)]
    assert kinds == [
        BoundaryReported("compaction"),
        BoundaryReported("resume"),
        BoundaryReported("delegation", child),
    ]
    assert entry.sequence == 3 and child == "s-c0ffeec0ffee"


def test_a_delegation_boundary_needs_the_child_s_first_message(tmp_path: Path) -> None:
    root = repo(tmp_path)
    with pytest.raises(SessionError) as caught:
        journal(root).boundary(session(root), "delegation")
    assert caught.value.code == "lattice.session"


def test_a_delegation_creates_a_child_that_records_its_parent_and_first_message(
    tmp_path: Path,
) -> None:
    root = repo(tmp_path)
    parent = session(root)
    log = journal(root)
    _, child = log.delegate(parent, "m-2", "fix the tokenizer")
    entries = log.entries(child)
    digest = sha256_text("fix the tokenizer")
    assert [e.payload for e in entries] == [
        ChildOf(parent, "m-2", digest),
        HumanMessage("m-2", digest, "fix the tokenizer"),
    ]
    log.record_message(child, "m-3", "and its tests")
    assert log.entries(child)[-1].sequence == 3
    assert child not in {s.name for s in (root / ".lattice" / "sessions").iterdir()}


def test_an_unknown_or_malformed_session_is_refused_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    root = repo(tmp_path)
    log = journal(root)
    for bad in ("s-000000000000", "not-a-session", "s-../../etc"):
        with pytest.raises(SessionNotFoundError):
            log.record_message(bad, "m-1", "hi")
    assert not (root / ".lattice" / "journal").exists()


def test_the_accepted_task_keeps_its_criteria_and_the_goal_digest(tmp_path: Path) -> None:
    root = make_repo(tmp_path)
    sid = session(root)
    task = compile_task(PY_GOAL, root)
    entry = journal(root).accept_task(sid, "run-1", task)
    assert entry.payload == TaskAccepted(
        task.id, "run-1", sha256_text(PY_GOAL), tuple(c.text for c in task.acceptance_criteria)
    )
    assert entry.payload.criteria


def test_every_entry_kind_round_trips_through_its_camel_case_record() -> None:
    payloads = [
        HumanMessage("m", "sha256:x", "text"),
        TaskAccepted("task-1", "run-1", "sha256:g", ("works",)),
        PlanApproved("p", "plan", "sha256:p"),
        TodoList(("a", "b")),
        DelegatedResult("sha256:q", "done", "sha256:r", "s-aaaaaaaaaaaa"),
        GrantIssued("run-1", ("E1", "E2")),
        PatchProposed("run-1", "sha256:d"),
        VerificationOutcome("run-1", "PASSED", True),
        BoundaryReported("resume"),
        ChildOf("s-bbbbbbbbbbbb", "m", "sha256:m"),
    ]
    for number, payload in enumerate(payloads, 1):
        entry = Entry("s-aaaaaaaaaaaa", number, "2026-03-04T12:00:00Z", payload)
        record = entry_record(entry)
        assert all("_" not in key for key in record)
        assert entry_from_record(record) == entry
    with pytest.raises(ValueError, match="unknown journal entry kind"):
        entry_from_record({**entry_record(entry), "kind": "gossip"})


def test_a_damaged_entry_is_a_session_error(tmp_path: Path) -> None:
    root = repo(tmp_path)
    sid = session(root)
    log = journal(root)
    log.record_message(sid, "m-1", "hi")
    damaged = entry_record(replace(log.entries(sid)[0], sequence=2))
    with Store.open(root / ".lattice" / "journal") as store:
        key = f"repo/lattice-journal/mem/{sid}/0000000002"
        store.put(STRUCTURAL, key, {**damaged, "kind": "gossip"})
    with pytest.raises(SessionError, match="damaged"):
        log.entries(sid)
