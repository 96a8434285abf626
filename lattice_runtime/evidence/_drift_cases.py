"""The first-drift hazards and matched controls: what happens between authorization and edit.

Each case starts from the same scene: a small repository, an accepted contract and an edit
planned against ``app.py`` (its authorization taken first). Then the case's *event* happens,
and the planned edit is attempted. A hazard's event makes the planned edit unsafe; a
control's event does not (or the agent refreshed after it), so the edit must land.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from lattice_runtime.control import ContractTerms, ExplicitControl

__all__ = ["CONTROLS", "HAZARDS", "TARGET", "DriftCase", "Scene", "digest"]

TARGET: Final = "app.py"
BACKGROUND: Final = "config.toml"
FILES: Final = {
    TARGET: "def reset(token):\n    return token.valid\n",
    BACKGROUND: "[reset]\nsingle_use = true\n",
    "spec.md": "Reset tokens are single-use.\n",
    "notes.txt": "unrelated\n",
}
REQUEST: Final = "Make reset tokens single-use."
TERMS: Final = ContractTerms(
    summary=REQUEST, scope=(TARGET,), criteria=("a token works once",), exclusions=("spec.md",)
)


def digest(text: str) -> str:
    """SHA-256 hex of ``text``."""
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Scene:
    """One case's world: the repository and its control (the ledger records the events)."""

    root: Path
    control: ExplicitControl

    def write(self, path: str, text: str) -> None:
        """Write a file as someone other than the agent would."""
        (self.root / path).write_text(text, encoding="utf-8")


Event = Callable[[Scene], None]


def _nothing_yet(scene: Scene) -> None:
    """No preparation."""


@dataclass(frozen=True, slots=True)
class DriftCase:
    """A hazard or a control.

    Attributes:
        name: Stable snake_case name.
        description: What happens between the authorization and the edit.
        event: Performs it.
        touched: The files the edit writes.
        declared: The targets declared when authorizing.
        refresh_after: The agent refreshes after the event (controls only).
        prepare: Sets the scene up before the authorization.
    """

    name: str
    description: str
    event: Event
    touched: tuple[str, ...] = (TARGET,)
    declared: tuple[str, ...] = (TARGET, BACKGROUND)
    refresh_after: bool = False
    prepare: Event = _nothing_yet
    preconditions: dict[str, str] = field(default_factory=lambda: {"ci": digest("ci-v1")})


def _nothing(scene: Scene) -> None:
    """Nothing happens."""


def _rewrite_contracts(scene: Scene) -> None:
    for revision in (scene.root / ".lattice" / "contract").glob("r*.json"):
        revision.write_text(revision.read_text().replace("single-use", "reusable"))


def _review_then_message(scene: Scene) -> None:
    scene.control.review_input("ok, go ahead")
    scene.control.human_message(3, digest("stop: keep tokens reusable for now"))


def _acceptance_message(scene: Scene) -> None:
    scene.control.review_input("tokens must also expire after an hour")


def _thanks_reviewed(scene: Scene) -> None:
    scene.control.human_message(2, digest("thanks"))
    scene.control.review_input()


def _parent_leases(scene: Scene) -> None:
    # the delegating parent (a process that has since ended) holds the execution lease
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    parent = ExplicitControl(scene.root, state_dir=scene.control.state.path, pid=ended.pid)
    node = parent.plan_add("Single-use tokens", ["a token works once"])
    parent.checkout(node.id, "parent", parent.plan.view().generation)


def _parent_gone(scene: Scene) -> None:
    # its lease is taken over by another agent: the work item changed hands
    control = scene.control
    [node] = control.plan.view().nodes
    control.checkout(node.id, "another-agent", control.plan.view().generation)


HAZARDS: Final[tuple[DriftCase, ...]] = (
    DriftCase(
        "declared_target_changed",
        "another process edits app.py after the edit was planned",
        lambda s: s.write(TARGET, FILES[TARGET] + "# hotfix by a colleague\n"),
    ),
    DriftCase(
        "accepted_background_changed",
        "config.toml, read and relied on when planning, changes",
        lambda s: s.write(BACKGROUND, "[reset]\nsingle_use = false\n"),
    ),
    DriftCase(
        "context_compacted",
        "the client compacts the conversation; the plan's reasons are gone",
        lambda s: s.control.boundary("compaction"),
    ),
    DriftCase(
        "user_change_arrived",
        "the human sends a new message changing the request",
        lambda s: s.control.human_message(2, digest("also log every reset")),
    ),
    DriftCase(
        "implicit_acceptance_change_arrived",
        "a message that changes the acceptance criteria is adopted into the contract",
        _acceptance_message,
    ),
    DriftCase(
        "implicit_truth_source_change_arrived",
        "the specification the plan was checked against is revised upstream",
        lambda s: s.write("spec.md", "Reset tokens may be reused within a minute.\n"),
        declared=(TARGET, BACKGROUND, "spec.md"),
    ),
    DriftCase(
        "input_arrived_after_review",
        "the human's input was reviewed, then another message arrived",
        _review_then_message,
    ),
    DriftCase(
        "unscoped_shell_mutation",
        "the edit also writes notes.txt, which was never declared",
        _nothing,
        touched=(TARGET, "notes.txt"),
    ),
    DriftCase(
        "external_precondition_changed",
        "the CI configuration the edit assumed changes",
        lambda s: s.control.precondition("ci", digest("ci-v3")),
    ),
    DriftCase(
        "arguments_rewritten_after_guard",
        "after authorization the edit's arguments are rewritten to write spec.md instead",
        _nothing,
        touched=("spec.md",),
    ),
    DriftCase(
        "contract_files_rewritten_together",
        "every contract file in the repository is rewritten consistently",
        _rewrite_contracts,
    ),
    DriftCase(
        "delegated_parent_disappeared",
        "the delegating parent is gone and another agent took the lease over",
        _parent_gone,
        prepare=_parent_leases,
    ),
)
"""The twelve hazards, in report order."""

CONTROLS: Final[tuple[DriftCase, ...]] = (
    DriftCase("plain_edit", "nothing happens before the edit", _nothing),
    DriftCase(
        "undeclared_file_changed",
        "notes.txt, not part of the edit, changes",
        lambda s: s.write("notes.txt", "still unrelated\n"),
    ),
    DriftCase(
        "target_changed_then_refreshed",
        "app.py changes and the agent refreshes before editing",
        lambda s: s.write(TARGET, FILES[TARGET] + "# hotfix\n"),
        refresh_after=True,
    ),
    DriftCase(
        "message_reviewed_then_refreshed",
        "a message arrives; the agent reviews it and refreshes",
        _thanks_reviewed,
        refresh_after=True,
    ),
    DriftCase(
        "compacted_then_refreshed",
        "the conversation is compacted; the agent refreshes",
        lambda s: s.control.boundary("compaction"),
        refresh_after=True,
    ),
    DriftCase(
        "precondition_reported_unchanged",
        "the CI configuration is reported again with the same digest",
        lambda s: s.control.precondition("ci", digest("ci-v1")),
    ),
    DriftCase(
        "new_file_still_absent",
        "the edit creates a file recorded as absent, which is still absent",
        _nothing,
        touched=("reset_log.py",),
        declared=("reset_log.py",),
    ),
)
"""The seven matched controls, in report order."""
