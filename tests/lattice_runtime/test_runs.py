import json
import subprocess
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lattice_runtime.compile.task import AcceptanceCriterion, TaskIR, VerificationCommand
from lattice_runtime.errors import LatticeError, UnsafePathError
from lattice_runtime.machine import (
    ALLOWED_TRANSITIONS,
    ProtocolDiagnostic,
    RunMachine,
    RunState,
    TurnRecord,
    VerificationRecord,
    list_runs,
    load_run,
    new_run_id,
    run_path,
)
from lattice_runtime.testing import FakeClock, SeededEntropy

S = RunState
TASK = TaskIR(
    id="task-0123456789ab",
    goal="Fix password reset. Do not change login.",
    invariants=("Do not change login",),
    acceptance_criteria=(AcceptanceCriterion("ac-1", "Fix password reset"),),
    risk="high",
    allowed_verification_commands=(VerificationCommand(("python", "-m", "pytest")),),
)


def make_repo(root: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


def start(repo: Path, seed: int = 0, clock: FakeClock | None = None) -> RunMachine:
    return RunMachine.start(
        repo,
        TASK,
        session_id="sess-1",
        base_commit="a" * 40,
        clock=clock or FakeClock(step=timedelta(milliseconds=250)),
        entropy=SeededEntropy(seed),
    )


def test_a_started_run_is_on_disk_in_created_with_its_task(repo):
    machine = start(repo)

    record = load_run(repo, machine.run_id)

    assert record == machine.record
    assert record.state is S.CREATED
    assert record.task == TASK.to_wire()
    assert (record.session_id, record.base_commit) == ("sess-1", "a" * 40)
    assert run_path(repo, machine.run_id) == repo / ".lattice" / "runs" / f"{machine.run_id}.json"


def test_the_record_on_disk_follows_every_transition(repo):
    machine = start(repo)
    for target in (S.COMPILED, S.INDEXED, S.CONTEXT_GRANTED, S.WORKER_RUNNING, S.CANCELLED):
        machine.transition(target, f"entered {target}")
        on_disk = load_run(repo, machine.run_id)
        assert on_disk.state is target
        assert on_disk.transitions == machine.record.transitions
    assert on_disk.outcome_reason == "entered CANCELLED"
    assert on_disk.ended_at == on_disk.transitions[-1].at


def test_a_run_left_behind_by_a_crash_can_be_resumed_and_ended(repo):
    crashed = start(repo)
    for target in (S.COMPILED, S.INDEXED, S.CONTEXT_GRANTED, S.WORKER_RUNNING):
        crashed.transition(target, f"entered {target}")
    crashed.record_pages(2)
    del crashed

    [left] = list_runs(repo)
    resumed = RunMachine.resume(repo, left.run_id, FakeClock())
    resumed.transition(S.FAILED, "crashed mid-run")

    record = load_run(repo, left.run_id)
    assert record.state is S.FAILED
    assert [t.to_state for t in record.transitions][-2:] == [S.WORKER_RUNNING, S.FAILED]
    assert record.telemetry.pages_granted == 2
    assert record.outcome_reason == "crashed mid-run"


def test_the_record_is_camel_case_json_with_the_telemetry(repo):
    machine = start(repo)
    machine.transition(S.COMPILED, "compiled")
    machine.record_turn(TurnRecord(1, "initial", 812, "ab" * 32, "patch"))
    machine.record_turn(TurnRecord(2, "patch_revision", 990, "cd" * 32, "patch"))
    machine.record_fault()
    machine.record_pages(3)
    machine.record_grants(2)
    machine.record_verification(VerificationRecord("python -m pytest -q", 124, 30.0, True))
    machine.record_diagnostic(ProtocolDiagnostic(1, "ab" * 32, "patch", "ok"))

    wire = json.loads(run_path(repo, machine.run_id).read_text(encoding="utf-8"))

    assert wire["runId"] == machine.run_id
    assert wire["state"] == "COMPILED"
    assert wire["transitions"][0]["from"] == "CREATED"
    assert wire["telemetry"]["tokensPerTurn"] == [812, 990]
    assert wire["telemetry"]["contextFaults"] == 1
    assert wire["telemetry"]["pagesGranted"] == 3
    assert wire["telemetry"]["grantsIssued"] == 2
    assert wire["telemetry"]["verifications"] == [
        {
            "command": "python -m pytest -q",
            "exitCode": 124,
            "durationSeconds": 30.0,
            "timedOut": True,
        }
    ]
    assert wire["telemetry"]["diagnostics"][0]["validationError"] is None
    assert wire["task"]["allowedVerificationCommands"] == ["python -m pytest"]
    assert load_run(repo, machine.run_id).telemetry == machine.telemetry


def test_a_verification_passes_only_when_it_exits_zero_in_time():
    assert VerificationRecord("npm test", 0, 1.0).passed
    assert not VerificationRecord("npm test", 1, 1.0).passed
    assert not VerificationRecord("npm test", 0, 30.0, timed_out=True).passed


def test_a_negative_count_is_refused_and_nothing_changes(repo):
    machine = start(repo)
    with pytest.raises(ValueError, match="negative"):
        machine.record_pages(-1)
    with pytest.raises(ValueError, match="negative"):
        machine.record_grants(-2)
    assert load_run(repo, machine.run_id).telemetry.pages_granted == 0


def test_writes_leave_no_temporary_files_behind(repo):
    machine = start(repo)
    for target in (S.COMPILED, S.INDEXED, S.FAILED):
        machine.transition(target, "step")
    files = sorted(p.name for p in (repo / ".lattice" / "runs").iterdir())
    assert files == [f"{machine.run_id}.json"]


def test_a_symlinked_runs_directory_is_refused_and_nothing_is_written(repo, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (repo / ".lattice").mkdir()
    (repo / ".lattice" / "runs").symlink_to(elsewhere, target_is_directory=True)

    with pytest.raises(UnsafePathError) as caught:
        start(repo)

    assert caught.value.code == "lattice.unsafe_path"
    assert list(elsewhere.iterdir()) == []
    with pytest.raises(UnsafePathError):
        list_runs(repo)


def test_a_refused_write_leaves_the_run_in_its_last_recorded_state(repo, tmp_path):
    machine = start(repo)
    machine.transition(S.COMPILED, "compiled")
    path = run_path(repo, machine.run_id)
    path.unlink()
    path.symlink_to(tmp_path / "planted.json")

    with pytest.raises(UnsafePathError):
        machine.transition(S.INDEXED, "indexed")

    assert machine.state is S.COMPILED
    assert not (tmp_path / "planted.json").exists()
    with pytest.raises(UnsafePathError, match="symlink"):
        load_run(repo, machine.run_id)


@pytest.mark.parametrize("run_id", ["../escape", "run-a/b", "run-.x", "other-1", "run-"])
def test_a_run_id_that_is_not_a_safe_file_name_is_refused(repo, run_id):
    with pytest.raises(UnsafePathError, match="not a run id"):
        load_run(repo, run_id)
    with pytest.raises(UnsafePathError, match="not a run id"):
        RunMachine(run_id, FakeClock(), repo_root=repo)


def test_loading_an_unknown_run_says_so(repo):
    with pytest.raises(LatticeError, match="no run run-missing") as caught:
        load_run(repo, "run-missing")
    assert caught.value.code == "lattice.error"


@pytest.mark.parametrize(
    "mutate",
    [
        lambda wire: "not json {",
        lambda wire: json.dumps({**wire, "schemaVersion": 2}),
        lambda wire: json.dumps({**wire, "state": "SLEEPING"}),
        lambda wire: json.dumps({**wire, "runId": "run-someone-else"}),
        lambda wire: json.dumps({**wire, "transitions": [{"from": "CREATED"}]}),
        lambda wire: json.dumps({**wire, "telemetry": {**wire["telemetry"], "pagesGranted": True}}),
        lambda wire: json.dumps(
            {**wire, "telemetry": {**wire["telemetry"], "turns": [{"kind": "x"}]}}
        ),
        lambda wire: json.dumps([wire]),
        lambda wire: json.dumps(
            {
                **wire,
                "telemetry": {
                    **wire["telemetry"],
                    "verifications": [
                        {"command": "x", "exitCode": 0, "durationSeconds": "1", "timedOut": False}
                    ],
                },
            }
        ),
    ],
)
def test_a_file_that_is_not_a_run_record_fails_closed(repo, mutate):
    machine = start(repo)
    path = run_path(repo, machine.run_id)
    path.write_text(mutate(json.loads(path.read_text(encoding="utf-8"))), encoding="utf-8")

    with pytest.raises(LatticeError, match=r"run record|another run"):
        load_run(repo, machine.run_id)


def test_list_runs_returns_every_run_oldest_first_and_ignores_other_files(repo):
    clock = FakeClock(step=timedelta(seconds=1))
    first = start(repo, seed=1, clock=clock)
    second = start(repo, seed=2, clock=clock)
    second.transition(S.COMPILED, "compiled")
    (repo / ".lattice" / "runs" / "notes.txt").write_text("hello", encoding="utf-8")

    runs = list_runs(repo)

    assert [r.run_id for r in runs] == [first.run_id, second.run_id]
    assert runs[1].state is S.COMPILED


def test_list_runs_of_a_repository_without_runs_is_empty(repo):
    assert list_runs(repo) == ()


def test_run_ids_sort_by_start_time_and_use_the_injected_randomness():
    early = new_run_id(datetime(2026, 1, 2, 3, 4, 5, 678_900, tzinfo=UTC), SeededEntropy(7))
    late = new_run_id(datetime(2026, 1, 2, 3, 4, 6, tzinfo=UTC), SeededEntropy(1))

    assert early == f"run-20260102T030405678Z-{SeededEntropy(7)(4).hex()}"
    assert early < late
    assert new_run_id(datetime(2026, 1, 2, tzinfo=UTC), SeededEntropy(7)) == new_run_id(
        datetime(2026, 1, 2, tzinfo=UTC), SeededEntropy(7)
    )
    with pytest.raises(ValueError, match="too few bytes"):
        new_run_id(datetime(2026, 1, 2, tzinfo=UTC), lambda n: b"")


def test_a_machine_without_a_repository_keeps_its_record_in_memory(tmp_path):
    machine = RunMachine("run-memory", FakeClock())
    machine.transition(S.COMPILED, "compiled")
    assert machine.record.task == {}
    assert not (tmp_path / ".lattice").exists()


@settings(max_examples=25, deadline=None)
@given(
    choices=st.lists(st.integers(min_value=0, max_value=15), max_size=25),
    tokens=st.lists(st.integers(min_value=0, max_value=50_000), max_size=4),
    exits=st.lists(st.tuples(st.integers(0, 255), st.floats(0, 600), st.booleans()), max_size=3),
)
def test_a_random_walk_persists_in_order_and_reloads_equal(choices, tokens, exits):
    with tempfile.TemporaryDirectory() as tmp:
        repo = make_repo(Path(tmp) / "repo")
        machine = start(repo)
        for turn, count in enumerate(tokens, start=1):
            machine.record_turn(TurnRecord(turn, "initial", count, "0" * 64, "patch"))
        for code, seconds, timed_out in exits:
            machine.record_verification(VerificationRecord("npm test", code, seconds, timed_out))
        walked = [S.CREATED]
        for choice in choices:
            options = sorted(ALLOWED_TRANSITIONS[machine.state])
            if not options:
                break
            walked.append(options[choice % len(options)])
            machine.transition(walked[-1], f"step {len(walked)}")

        loaded = load_run(repo, machine.run_id)

        assert loaded == machine.record
        assert [t.to_state for t in loaded.transitions] == walked[1:]
        assert loaded.telemetry.tokens_per_turn == tuple(tokens)
        assert list(Path(repo, ".lattice", "runs").glob("*.tmp")) == []
