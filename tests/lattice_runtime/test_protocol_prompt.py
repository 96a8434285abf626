"""render_prompt: the protocol version 5 prompt carries the task, rules, shapes and pages."""

from __future__ import annotations

import dataclasses

import pytest

from lattice_runtime.compile.task import AcceptanceCriterion, TaskIR, VerificationCommand
from lattice_runtime.protocol import (
    ContextRequest,
    PatchProposal,
    PromptInput,
    PromptPage,
    ProtocolViolation,
    parse_response,
    protocol_repair_feedback,
    render_prompt,
)

TASK = TaskIR(
    id="task-0123456789ab",
    goal="Consume a reset token only once; do not change login",
    constraints=("keep the public API",),
    invariants=("do not change login",),
    acceptance_criteria=(
        AcceptanceCriterion("ac-1", "Consume a reset token only once"),
        AcceptanceCriterion("ac-2", "do not change login"),
    ),
    risk="high",
    allowed_verification_commands=(
        VerificationCommand(("python", "-m", "pytest")),
        VerificationCommand(("make", "check"), origin="Makefile"),
    ),
)
SLICE = PromptPage(
    page_id="file:src/auth.py:1a2b3c:L10-L14",
    path="src/auth.py",
    lines=(10, 14),
    symbol="reset_password",
    handle="E1",
    operations=("replace_text",),
    content='def reset_password(token):\n    """Reset."""\n\treturn token  # ``` not a fence\n',
)
TEST_FILE = PromptPage(
    page_id="file:tests/test_auth.py:4d5e6f",
    path="tests/test_auth.py",
    lines=None,
    symbol=None,
    handle="E2",
    operations=(),
    content="def test_once():\n    assert True",  # no final newline
)
PROMPT = PromptInput(
    task=TASK,
    turn="initial",
    pages=(SLICE, TEST_FILE),
    repo_map="src/audit.py: record, AuditLog",
    feedback=None,
    faults_left=3,
    turns_left=4,
)


def test_the_prompt_states_goal_criteria_invariants_constraints_and_risk() -> None:
    text = render_prompt(PROMPT)
    assert "protocol version 5" in text
    assert TASK.goal in text
    assert "- ac-1: Consume a reset token only once" in text
    assert "- ac-2: do not change login" in text
    assert "- do not change login" in text.split("## Invariants")[1]
    assert "- keep the public API" in text
    assert "## Risk\nhigh:" in text


def test_the_prompt_states_the_handle_rules() -> None:
    text = render_prompt(PROMPT)
    assert "a handle with no operations is read-only" in text
    assert "create_file is the only operation that carries a path" in text
    assert "copied exactly" in text
    assert "inside the page's granted lines" in text
    assert "exactly once" in text


def test_each_page_shows_its_header_and_its_content_verbatim() -> None:
    text = render_prompt(PROMPT)
    for page in PROMPT.pages:
        assert page.content in text
        assert f"### Page {page.page_id}\npath: {page.path}\n" in text
        assert f"handle: {page.handle}\n" in text
    assert "lines: 10-14\nsymbol: reset_password\nhandle: E1\noperations: replace_text\n" in text
    assert "lines: whole file\nsymbol: -\nhandle: E2\noperations: none (read-only)\n" in text
    begin, end = "----- BEGIN E1 src/auth.py -----\n", "----- END E1 src/auth.py -----"
    assert text.split(begin)[1].split(end)[0] == SLICE.content
    begin, end = "----- BEGIN E2 tests/test_auth.py -----\n", "\n----- END E2 tests/test_auth.py"
    assert text.split(begin)[1].split(end)[0] == TEST_FILE.content


def test_both_example_responses_in_the_prompt_parse_as_their_shapes() -> None:
    examples = [line for line in render_prompt(PROMPT).splitlines() if line.startswith('{"kind"')]
    assert [type(parse_response(line).response) for line in examples] == [
        ContextRequest,
        PatchProposal,
    ]


def test_the_prompt_lists_the_repo_map_and_only_allowlisted_commands() -> None:
    text = render_prompt(PROMPT)
    assert "src/audit.py: record, AuditLog" in text
    commands = text.split("## Verification commands")[1]
    assert "- python -m pytest\n- make check\n" in commands


def test_the_same_input_renders_the_same_bytes() -> None:
    again = dataclasses.replace(PROMPT, pages=tuple(dataclasses.replace(p) for p in PROMPT.pages))
    assert render_prompt(PROMPT).encode() == render_prompt(again).encode()


@pytest.mark.parametrize("turn", ["protocol_repair", "patch_revision"])
def test_repair_and_revision_turns_carry_the_concrete_feedback(turn: str) -> None:
    feedback = "patch.changes[0].editHandle 'E9' is not a handle like 'E1'"
    prompt = dataclasses.replace(PROMPT, turn=turn, feedback=feedback)
    text = render_prompt(prompt)
    assert f"## Feedback on your last response\n{feedback}\n" in text
    assert f"Turn: {turn}:" in text
    assert "## Feedback" not in render_prompt(PROMPT)


@pytest.mark.parametrize("turn", ["protocol_repair", "patch_revision"])
def test_a_repair_or_revision_turn_without_feedback_is_refused(turn: str) -> None:
    with pytest.raises(ValueError, match="feedback"):
        dataclasses.replace(PROMPT, turn=turn, feedback=None)
    with pytest.raises(ValueError, match="feedback"):
        dataclasses.replace(PROMPT, turn=turn, feedback="  ")


def test_the_prompt_says_when_context_requests_or_turns_run_out() -> None:
    text = render_prompt(dataclasses.replace(PROMPT, faults_left=0, turns_left=1))
    assert "No context requests are left: answer with a patch." in text
    assert "This is your last turn." in text
    assert "You may make 3 more context request(s). Turns left: 4." in render_prompt(PROMPT)


def test_a_prompt_without_pages_map_or_commands_says_so() -> None:
    bare = TaskIR(id="task-000000000000", goal="fix a typo in the readme", risk="low")
    text = render_prompt(dataclasses.replace(PROMPT, task=bare, pages=(), repo_map=""))
    assert "(no pages granted yet: send a context request)" in text
    assert "(none found in this repository)" in text
    assert "(none beyond the goal)" in text
    assert "## Risk\nlow:" in text


def test_an_unknown_turn_kind_or_a_negative_count_is_refused() -> None:
    with pytest.raises(ValueError, match="turn kind"):
        dataclasses.replace(PROMPT, turn="bonus")
    with pytest.raises(ValueError, match="negative"):
        dataclasses.replace(PROMPT, faults_left=-1)
    with pytest.raises(ValueError, match="negative"):
        dataclasses.replace(PROMPT, turns_left=-1)


def test_repair_feedback_names_the_reason_and_the_place_of_the_error() -> None:
    with pytest.raises(ProtocolViolation) as caught:
        parse_response('{"kind": "patch", "patch": {"summary": "s", "changes": []}}')
    feedback = protocol_repair_feedback(caught.value)
    assert feedback.startswith("Your last response was refused (schema): patch is missing")
    prompt = dataclasses.replace(PROMPT, turn="protocol_repair", feedback=feedback)
    assert feedback in render_prompt(prompt)
