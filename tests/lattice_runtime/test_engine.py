"""The step-wise engine: turns handed out and answered one at a time, across engine objects."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lattice_runtime.errors import SessionError, StaleFileError
from lattice_runtime.machine import RunEngine, RunOptions, RunState
from lattice_runtime.workers import MockWorker
from repocontext.tokens import count_tokens
from tests.lattice_runtime.fixture_repos import (
    PY_GOAL,
    SERVICE,
    fixture_script,
    git,
    make_repo,
    pytest_exit,
)


def answer(engine: RunEngine) -> str:
    turn = engine.next_turn()
    assert turn is not None
    return MockWorker(fixture_script()).respond(turn)


def test_a_run_can_be_answered_by_another_engine_object(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    with RunEngine.begin(repo, RunOptions(goal=PY_GOAL), worker="test") as first:
        turn = first.next_turn()
        assert turn is not None and turn.kind == "initial" and first.awaiting
        assert first.next_turn() == turn  # asked again before an answer: the same turn
        raw = MockWorker(fixture_script()).respond(turn)
        run_id = first.run_id
    with RunEngine.resume(repo, run_id) as second:
        assert second.awaiting and second.state is RunState.WORKER_RUNNING
        second.submit(raw)
        assert second.done and second.outcome().passed
        (recorded,) = second.outcome().record.telemetry.turns
        assert recorded.prompt_tokens == count_tokens(turn.prompt)  # counted at hand-out
    assert pytest_exit(repo) == 0


def test_an_answer_nobody_asked_for_is_refused(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    with RunEngine.begin(repo, RunOptions(goal=PY_GOAL), worker="test") as engine:
        with pytest.raises(SessionError, match="awaits no answer"):
            engine.submit("{}")
        assert engine.state is RunState.CONTEXT_GRANTED


def test_a_verified_patch_is_applied_later_and_only_once(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    options = RunOptions(goal=PY_GOAL, apply=False)
    with RunEngine.begin(repo, options, worker="test") as engine:
        engine.submit(answer(engine))
        assert engine.outcome().passed and not engine.outcome().applied
        assert pytest_exit(repo) == 1
        engine.apply()
        assert engine.outcome().applied and pytest_exit(repo) == 0
        with pytest.raises(SessionError, match="applied already"):
            engine.apply()


def test_a_later_apply_refuses_a_file_changed_since_verification(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    with RunEngine.begin(repo, RunOptions(goal=PY_GOAL, apply=False), worker="t") as engine:
        engine.submit(answer(engine))
        changed = (repo / SERVICE).read_text() + "# mine\n"
        (repo / SERVICE).write_text(changed)
        with pytest.raises(StaleFileError):
            engine.apply()
        assert (repo / SERVICE).read_text() == changed


def test_a_failed_run_has_nothing_to_apply(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    with RunEngine.begin(repo, RunOptions(goal=PY_GOAL), worker="t") as engine:
        engine.next_turn()
        engine.submit("{")
        engine.next_turn()
        engine.submit("{")
        assert engine.state is RunState.FAILED and engine.next_turn() is None
        with pytest.raises(SessionError, match="no verified patch"):
            engine.apply()


def test_the_cache_is_used_only_when_asked_and_only_on_identical_code(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    plain = RunOptions(goal=PY_GOAL, apply=False)
    cached = RunOptions(goal=PY_GOAL, apply=False, use_cache=True)
    for options in (plain, cached):
        with RunEngine.begin(repo, options, worker="t") as engine:
            engine.submit(answer(engine))
            assert engine.outcome().passed
    with RunEngine.begin(repo, plain, worker="t") as engine:  # not asked: no reuse
        assert engine.state is RunState.CONTEXT_GRANTED
    with RunEngine.begin(repo, cached, worker="t") as engine:
        assert engine.done and engine.outcome().passed
        assert engine.outcome().record.telemetry.turns == ()
    (repo / "README.md").write_text("a change anywhere changes the key\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "readme")
    with RunEngine.begin(repo, cached, worker="t") as engine:
        assert engine.state is RunState.CONTEXT_GRANTED


def test_a_resumed_run_keeps_its_pages_and_fault_budget(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    ask = {"kind": "context_request", "requests": [{"reason": "r", "symbol": "AuditLog"}]}
    with RunEngine.begin(repo, RunOptions(goal=PY_GOAL), worker="t") as engine:
        engine.next_turn()
        engine.submit(json.dumps(ask))
        pages = engine.next_turn().pages  # type: ignore[union-attr]
        run_id = engine.run_id
    with RunEngine.resume(repo, run_id) as again:
        turn = again.next_turn()
        assert turn is not None and turn.kind == "context_fault"
        assert turn.pages == pages
        assert again.outcome().record.telemetry.context_faults == 1
