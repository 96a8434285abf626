from collections import deque
from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lattice_runtime.errors import IllegalTransitionError
from lattice_runtime.machine import (
    ALLOWED_TRANSITIONS,
    TERMINAL_STATES,
    RunMachine,
    RunState,
    Transition,
    is_allowed,
)
from lattice_runtime.testing import FakeClock

S = RunState

# The contract's edges, written out independently of the table in states.py.
FORWARD_EDGES = {
    (S.CREATED, S.COMPILED),
    (S.COMPILED, S.INDEXED),
    (S.INDEXED, S.CONTEXT_GRANTED),
    (S.CONTEXT_GRANTED, S.WORKER_RUNNING),
    (S.CONTEXT_GRANTED, S.PATCH_LOWERED),
    (S.WORKER_RUNNING, S.RESPONSE_NORMALIZED),
    (S.WORKER_RUNNING, S.PROTOCOL_REPAIR),
    (S.RESPONSE_NORMALIZED, S.RESPONSE_VALIDATED),
    (S.RESPONSE_VALIDATED, S.CONTEXT_FAULT),
    (S.RESPONSE_VALIDATED, S.PATCH_LOWERED),
    (S.RESPONSE_VALIDATED, S.PATCH_REVISION),
    (S.CONTEXT_FAULT, S.CONTEXT_GRANTED),
    (S.PATCH_LOWERED, S.TRANSACTION_RUNNING),
    (S.PROTOCOL_REPAIR, S.WORKER_RUNNING),
    (S.PATCH_REVISION, S.WORKER_RUNNING),
    (S.TRANSACTION_RUNNING, S.VERIFYING),
    (S.VERIFYING, S.PASSED),
    (S.VERIFYING, S.PATCH_REVISION),
}
TERMINAL = {S.PASSED, S.FAILED, S.CANCELLED}
NON_TERMINAL = [state for state in S if state not in TERMINAL]
EXPECTED_EDGES = FORWARD_EDGES | {
    (state, end) for state in NON_TERMINAL for end in (S.FAILED, S.CANCELLED)
}
ILLEGAL_EDGES = sorted({(a, b) for a in S for b in S} - EXPECTED_EDGES)


def path_to(target: RunState) -> list[RunState]:
    """The shortest list of states after CREATED that reaches ``target`` over allowed edges."""
    previous: dict[RunState, RunState] = {}
    queue = deque([S.CREATED])
    seen = {S.CREATED}
    while queue:
        state = queue.popleft()
        for nxt in sorted(ALLOWED_TRANSITIONS[state]):
            if nxt not in seen:
                seen.add(nxt)
                previous[nxt] = state
                queue.append(nxt)
    steps = []
    while target != S.CREATED:
        steps.append(target)
        target = previous[target]
    return steps[::-1]


def machine_in(state: RunState) -> RunMachine:
    machine = RunMachine("run-test", FakeClock())
    for step in path_to(state):
        machine.transition(step, f"to {step}")
    assert machine.state is state
    return machine


def test_there_are_exactly_the_sixteen_states_of_the_contract():
    assert [state.value for state in S] == [
        "CREATED",
        "COMPILED",
        "INDEXED",
        "CONTEXT_GRANTED",
        "WORKER_RUNNING",
        "RESPONSE_NORMALIZED",
        "RESPONSE_VALIDATED",
        "CONTEXT_FAULT",
        "PATCH_LOWERED",
        "PROTOCOL_REPAIR",
        "PATCH_REVISION",
        "TRANSACTION_RUNNING",
        "VERIFYING",
        "PASSED",
        "FAILED",
        "CANCELLED",
    ]
    assert set(TERMINAL_STATES) == TERMINAL
    assert all(state.terminal == (state in TERMINAL) for state in S)


def test_the_allowed_table_is_exactly_the_contracts_edges():
    table = {(a, b) for a, targets in ALLOWED_TRANSITIONS.items() for b in targets}
    assert table == EXPECTED_EDGES
    assert all(is_allowed(a, b) for a, b in EXPECTED_EDGES)


@pytest.mark.parametrize(("source", "target"), sorted(EXPECTED_EDGES))
def test_every_allowed_edge_succeeds_and_is_recorded_with_its_reason(source, target):
    machine = machine_in(source)
    before = len(machine.record.transitions)

    step = machine.transition(target, "because the test says so")

    assert machine.state is target
    assert step == Transition(source, target, "because the test says so", step.at)
    assert machine.record.transitions[before:] == (step,)


@pytest.mark.parametrize(("source", "target"), ILLEGAL_EDGES)
def test_every_edge_outside_the_table_raises_and_leaves_the_state(source, target):
    machine = machine_in(source)
    before = machine.record

    with pytest.raises(IllegalTransitionError) as caught:
        machine.transition(target, "not allowed")

    assert caught.value.code == "lattice.illegal_transition"
    assert machine.record == before


@pytest.mark.parametrize("terminal", sorted(TERMINAL))
def test_nothing_leaves_a_terminal_state(terminal):
    machine = machine_in(terminal)
    for target in S:
        with pytest.raises(IllegalTransitionError, match="cannot go") as caught:
            machine.transition(target, "after the end")
        assert caught.value.hint.endswith("nothing (terminal).")
    assert machine.state is terminal


def test_a_transition_without_a_reason_is_refused():
    machine = RunMachine("run-test", FakeClock())
    with pytest.raises(IllegalTransitionError, match="no reason"):
        machine.transition(S.COMPILED, "  ")
    assert machine.state is S.CREATED
    assert machine.record.transitions == ()


def test_transitions_carry_the_injected_clocks_time_in_utc():
    clock = FakeClock(step=timedelta(milliseconds=1500))
    machine = RunMachine("run-test", clock)

    first = machine.transition(S.COMPILED, "compiled")
    second = machine.transition(S.INDEXED, "indexed")

    assert machine.record.started_at == "2026-01-02T03:04:05.000Z"
    assert first.at == "2026-01-02T03:04:06.500Z"
    assert second.at == "2026-01-02T03:04:08.000Z"


def test_reaching_a_terminal_state_sets_the_outcome_and_the_end_time():
    machine = machine_in(S.VERIFYING)
    assert machine.record.outcome_reason is None
    assert machine.record.ended_at is None

    last = machine.transition(S.PASSED, "every verification command exited 0")

    assert machine.record.outcome_reason == "every verification command exited 0"
    assert machine.record.ended_at == last.at


def test_can_transition_answers_from_the_current_state():
    machine = machine_in(S.RESPONSE_VALIDATED)
    assert machine.can_transition(S.CONTEXT_FAULT)
    assert machine.can_transition(S.CANCELLED)
    assert not machine.can_transition(S.VERIFYING)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=15), max_size=40))
def test_a_random_walk_over_allowed_edges_is_recorded_in_order(choices):
    machine = RunMachine("run-walk", FakeClock(step=timedelta(seconds=1)))
    walked = [S.CREATED]
    for choice in choices:
        options = sorted(ALLOWED_TRANSITIONS[machine.state])
        if not options:
            break
        target = options[choice % len(options)]
        machine.transition(target, f"step {len(walked)}")
        walked.append(target)

    transitions = machine.record.transitions
    assert [t.from_state for t in transitions] == walked[:-1]
    assert [t.to_state for t in transitions] == walked[1:]
    assert [t.at for t in transitions] == sorted(t.at for t in transitions)
    assert machine.state is walked[-1]
