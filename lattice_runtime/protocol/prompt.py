"""The prompt of one worker turn (prompt protocol version 5), rendered from frozen inputs.

The layout is fixed (``docs/lattice-protocol.md``, "Prompt layout"): header, goal, acceptance
criteria, invariants, constraints, risk, rules, response format, feedback, pages, repository
map, verification commands. Rendering is a pure function: the same input gives the same bytes.
Page content is copied verbatim between marker lines, so ``oldContent`` can be copied from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal, get_args

from lattice_runtime.compile.task import Risk, TaskIR
from lattice_runtime.errors import ProtocolError
from lattice_runtime.protocol.messages import PROTOCOL_VERSION

__all__ = ["PromptInput", "PromptPage", "TurnKind", "protocol_repair_feedback", "render_prompt"]

TurnKind = Literal["initial", "context_fault", "protocol_repair", "patch_revision"]
"""Why the worker is called: the first turn, after a context fault, to repair a refused
response, or to revise a patch that failed lowering or verification."""

_FEEDBACK_TURNS: Final = ("protocol_repair", "patch_revision")

_TURN_TEXT: Final[dict[TurnKind, str]] = {
    "initial": "initial: read the pages and answer with a patch or a context request.",
    "context_fault": "context fault: the pages you asked for were granted; answer again.",
    "protocol_repair": (
        "protocol_repair: your last response broke the protocol (feedback below); "
        "send it again as one valid JSON object."
    ),
    "patch_revision": (
        "patch_revision: your last patch was refused or failed verification "
        "(feedback below); send a revised patch."
    ),
}

_RISK_TEXT: Final[dict[Risk, str]] = {
    "low": "low: a small, mechanical change.",
    "medium": "medium: change only what the goal needs.",
    "high": (
        "high: security- or data-sensitive code; keep the change minimal, "
        "never weaken a check, and keep every invariant."
    ),
}

_RULES: Final = (
    "You never write files. You propose; the runtime checks your proposal against its grants, "
    "applies it in a scratch worktree and runs the verification commands itself.",
    "Edit only through edit handles (E1, E2, ...). Each page names its handle and the "
    "operations it allows; a handle with no operations is read-only.",
    "create_file is the only operation that carries a path; every other change names an "
    "editHandle and no path. A created path is relative and must not exist yet.",
    "replace_text: each oldContent must be copied exactly (spaces and line breaks included) "
    "from inside the page's granted lines and must occur there exactly once.",
    "Use each handle in at most one change, and create each path at most once.",
    "Answer with exactly one JSON object and nothing else: no prose, no second object. "
    "Use exactly the keys shown below (only pathHint and symbol may be left out); any other "
    "key, kind or operation gets the response refused.",
)

_CONTEXT_EXAMPLE: Final = (
    '{"kind":"context_request","requests":[{"reason":"need the caller of reset_password",'
    '"pathHint":"src/app/auth.py","symbol":"reset_password"}]}'
)
_PATCH_EXAMPLE: Final = (
    '{"kind":"patch","patch":{"summary":"consume the token once",'
    '"changes":[{"editHandle":"E1","operation":"replace_text",'
    '"replacements":[{"oldContent":"return token","newContent":"return consume(token)"}]}],'
    '"verificationCommands":["pytest"]}}'
)
_CHANGE_FORMS: Final = (
    '{"editHandle":"E1","operation":"replace_text",'
    '"replacements":[{"oldContent":"...","newContent":"..."}]}',
    '{"editHandle":"E1","operation":"replace_file","replacementContent":"..."}',
    '{"editHandle":"E1","operation":"delete_file"}',
    '{"operation":"create_file","path":"relative/path.py","content":"..."}',
)


@dataclass(frozen=True, slots=True)
class PromptPage:
    """One granted page as the worker sees it.

    Attributes:
        page_id: The kernel's page id (``file:<path>:<fingerprint>[:L<a>-L<b>]``).
        path: Repository-relative path.
        lines: First and last line of the slice (1-based, inclusive), or None for the file.
        symbol: The symbol the page is centred on, if any.
        handle: The edit handle bound to the page (``E1``...).
        operations: The operations the handle allows (empty: read-only).
        content: The page's text, shown verbatim.
    """

    page_id: str
    path: str
    lines: tuple[int, int] | None
    symbol: str | None
    handle: str
    operations: tuple[str, ...]
    content: str


@dataclass(frozen=True, slots=True)
class PromptInput:
    """Everything one turn's prompt is rendered from.

    Attributes:
        task: The compiled task.
        turn: Why the worker is called.
        pages: The granted pages, in the order shown.
        repo_map: The repository map of ungranted files (already within its budget).
        feedback: What went wrong last turn; required on repair and revision turns.
        faults_left: Context requests the worker may still make.
        turns_left: Worker turns left, this one included.

    Raises:
        ValueError: A repair or revision turn without feedback, or a negative count.
    """

    task: TaskIR
    turn: TurnKind
    pages: tuple[PromptPage, ...]
    repo_map: str
    feedback: str | None
    faults_left: int
    turns_left: int

    def __post_init__(self) -> None:
        if self.turn not in get_args(TurnKind):
            raise ValueError(f"unknown turn kind {self.turn!r}")
        if self.turn in _FEEDBACK_TURNS and not (self.feedback or "").strip():
            raise ValueError(f"a {self.turn} turn needs the concrete feedback")
        if self.faults_left < 0 or self.turns_left < 0:
            raise ValueError("faults_left and turns_left must not be negative")


def _bullets(items: tuple[str, ...], empty: str) -> list[str]:
    return [f"- {item}" for item in items] if items else [f"- {empty}"]


def _task_sections(task: TaskIR) -> list[str]:
    criteria = tuple(f"{c.id}: {c.text}" for c in task.acceptance_criteria)
    return [
        "## Goal",
        task.goal.strip(),
        "",
        "## Acceptance criteria",
        *_bullets(criteria, "(none beyond the goal)"),
        "",
        "## Invariants (must still hold after your patch)",
        *_bullets(task.invariants, "(none stated)"),
        "",
        "## Constraints",
        *_bullets(task.constraints, "(none)"),
        "",
        "## Risk",
        _RISK_TEXT[task.risk],
        "",
    ]


def _budget_line(p: PromptInput) -> str:
    faults = (
        f"You may make {p.faults_left} more context request(s)."
        if p.faults_left
        else "No context requests are left: answer with a patch."
    )
    turns = "This is your last turn." if p.turns_left <= 1 else f"Turns left: {p.turns_left}."
    return f"{faults} {turns}"


def _protocol_sections() -> list[str]:
    return [
        "## Rules",
        *(f"{number}. {rule}" for number, rule in enumerate(_RULES, start=1)),
        "",
        "## Response format",
        "Either a context request (each request has a reason and a pathHint and/or a symbol;"
        " pathHint and symbol are optional, at least one is required):",
        _CONTEXT_EXAMPLE,
        "or a patch (one change or more; verificationCommands may be empty):",
        _PATCH_EXAMPLE,
        "Each change is one of:",
        *(f"- {form}" for form in _CHANGE_FORMS),
        "",
    ]


def _page_header(page: PromptPage) -> list[str]:
    span = "whole file" if page.lines is None else f"{page.lines[0]}-{page.lines[1]}"
    operations = ", ".join(page.operations) if page.operations else "none (read-only)"
    return [
        f"### Page {page.page_id}",
        f"path: {page.path}",
        f"lines: {span}",
        f"symbol: {page.symbol or '-'}",
        f"handle: {page.handle}",
        f"operations: {operations}",
    ]


def _page_sections(pages: tuple[PromptPage, ...]) -> list[str]:
    lines = ["## Pages"]
    if not pages:
        lines += ["(no pages granted yet: send a context request)", ""]
    for page in pages:
        # The content goes in unchanged; joining adds back the one newline removed here, and
        # a newline when the content has none, so the END marker always starts a line.
        lines += [
            *_page_header(page),
            f"----- BEGIN {page.handle} {page.path} -----",
            page.content.removesuffix("\n"),
            f"----- END {page.handle} {page.path} -----",
            "",
        ]
    return lines


def _closing_sections(p: PromptInput) -> list[str]:
    commands = tuple(c.display for c in p.task.allowed_verification_commands)
    return [
        "## Repository map (files without pages; ask for them with a context request)",
        p.repo_map.strip() or "(empty)",
        "",
        "## Verification commands (the runtime runs these; others are ignored)",
        *_bullets(commands, "(none found in this repository)"),
    ]


def render_prompt(p: PromptInput) -> str:
    """The prompt of one worker turn.

    Args:
        p: The turn's inputs.

    Returns:
        The prompt text, ending in a newline; identical for identical inputs.
    """
    lines = [
        f"# Lattice worker turn (protocol version {PROTOCOL_VERSION})",
        f"Task: {p.task.id}",
        f"Turn: {_TURN_TEXT[p.turn]}",
        _budget_line(p),
        "",
        *_task_sections(p.task),
        *_protocol_sections(),
    ]
    if p.feedback is not None and p.feedback.strip():
        lines += ["## Feedback on your last response", p.feedback.strip(), ""]
    lines += [*_page_sections(p.pages), *_closing_sections(p)]
    return "\n".join(lines) + "\n"


def protocol_repair_feedback(error: ProtocolError) -> str:
    """The feedback of a ``protocol_repair`` turn for a refused response.

    Args:
        error: The refusal (a :class:`~.diagnostics.ProtocolViolation` from
            :func:`~.parse.parse_response`).

    Returns:
        One deterministic paragraph naming the reason and where the response broke the rules.
    """
    return (
        f"Your last response was refused ({error.reason}): {error.message}. "
        "Answer again with exactly one JSON object in one of the two shapes shown, "
        "with no text around it."
    )
