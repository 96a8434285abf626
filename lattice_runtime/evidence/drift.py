"""First-drift evidence: each hazard through a plain edit path and under explicit control.

:func:`run_drift` plays every case of :mod:`._drift_cases` twice in a scratch repository:
the *plain* arm writes the planned edit directly (an unguarded edit path); the *controlled*
arm takes a receipt before the event and attempts the edit through
:meth:`ExplicitControl.guarded`. An edit that lands after a hazard is unsafe. A crash case
SIGKILLs a process between authorization and apply and checks, after a restart, that nothing
landed and the receipt cannot be reused. :func:`write_drift` publishes the report as
``docs/evidence/first-drift.json``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pydantic import JsonValue

from lattice_runtime._files import atomic_write
from lattice_runtime.control import ControlError, ExplicitControl
from lattice_runtime.evidence._drift_cases import (
    CONTROLS,
    FILES,
    HAZARDS,
    REQUEST,
    TARGET,
    TERMS,
    DriftCase,
    Scene,
)

__all__ = ["DEFAULT_DRIFT_PATH", "DriftReport", "run_drift", "write_drift"]

DEFAULT_DRIFT_PATH: Final = Path("docs/evidence/first-drift.json")
EDIT: Final = "# edited under the plan\n"

_CRASH_SCRIPT: Final = """
import os, signal, sys
from pathlib import Path
from lattice_runtime.control import ExplicitControl
root, state, receipt = sys.argv[1:]
control = ExplicitControl(Path(root), state_dir=Path(state))
with control.guarded(receipt, "edit", {"path": "app.py"}, ["app.py"]):
    os.kill(os.getpid(), signal.SIGKILL)
    Path(root, "app.py").write_text("landed after the kill")
"""


@contextmanager
def _scene() -> Iterator[Scene]:
    with tempfile.TemporaryDirectory(prefix="lattice-drift-") as scratch:
        root = Path(scratch) / "repo"
        root.mkdir()
        for path, text in FILES.items():
            (root / path).write_text(text, encoding="utf-8")
        control = ExplicitControl(root, state_dir=Path(scratch) / "state")
        control.intake(REQUEST, TERMS)
        yield Scene(root, control)


def _edit(scene: Scene, case: DriftCase) -> None:
    for path in case.touched:
        target = scene.root / path
        before = target.read_text(encoding="utf-8") if target.exists() else ""
        target.write_text(before + EDIT, encoding="utf-8")


def _landed(scene: Scene, case: DriftCase) -> bool:
    return all(
        (scene.root / p).exists() and (scene.root / p).read_text().endswith(EDIT)
        for p in case.touched
    )


def _plain(case: DriftCase) -> dict[str, JsonValue]:
    with _scene() as scene:
        case.prepare(scene)
        case.event(scene)
        _edit(scene, case)  # an unguarded edit path writes what was planned
        return {"landed": _landed(scene, case), "refused": None}


def _controlled(case: DriftCase) -> dict[str, JsonValue]:
    with _scene() as scene:
        control = scene.control
        case.prepare(scene)
        receipt = control.refresh_context(case.declared, case.preconditions)
        case.event(scene)
        if case.refresh_after:
            receipt = control.refresh_context(case.declared, case.preconditions)
        refused: str | None = None
        try:
            with control.guarded(receipt.id, "edit", {"paths": case.touched}, case.touched):
                _edit(scene, case)
        except ControlError as exc:
            refused = exc.code
        return {"landed": _landed(scene, case), "refused": refused}


def _crash() -> dict[str, JsonValue]:
    with _scene() as scene:
        receipt = scene.control.refresh_context([TARGET])
        state = scene.control.state.path
        done = subprocess.run(
            [sys.executable, "-c", _CRASH_SCRIPT, str(scene.root), str(state), receipt.id],
            capture_output=True,
            check=False,
        )
        restarted = ExplicitControl(scene.root, state_dir=state)
        reusable = True
        try:
            with restarted.guarded(receipt.id, "edit", {"path": TARGET}, [TARGET]):
                pass
        except ControlError:
            reusable = False
        landed = (scene.root / TARGET).read_text() != FILES[TARGET]
        return {
            "killed": done.returncode == -signal.SIGKILL,
            "landed": landed,
            "receiptReusable": reusable,
            "unsafe": landed or reusable,
        }


@dataclass(frozen=True, slots=True)
class DriftReport:
    """The first-drift report (its JSON form is ``docs/evidence/first-drift.json``).

    Attributes:
        hazards: Per hazard: name, description, and each arm's ``unsafe``/``landed``/``refused``.
        controls: Per control: name, description, and each arm's ``ok``.
        crash: The crash case: ``killed``, ``landed``, ``receiptReusable``, ``unsafe``.
    """

    hazards: tuple[dict[str, JsonValue], ...]
    controls: tuple[dict[str, JsonValue], ...]
    crash: dict[str, JsonValue]

    def summary(self) -> dict[str, int]:
        """Unsafe edits per arm over the hazards, successful edits per arm over the controls."""
        return {
            "hazards": len(self.hazards),
            "plainUnsafe": sum(_flag(h, "plain", "unsafe") for h in self.hazards),
            "controlledUnsafe": sum(_flag(h, "controlled", "unsafe") for h in self.hazards),
            "controls": len(self.controls),
            "plainOk": sum(_flag(c, "plain", "ok") for c in self.controls),
            "controlledOk": sum(_flag(c, "controlled", "ok") for c in self.controls),
        }

    def problems(self) -> list[str]:
        """Why the report does not show the expected result (empty: it does)."""
        counts = self.summary()
        problems = []
        if counts["plainUnsafe"] != counts["hazards"]:
            problems.append(f"plain arm unsafe in {counts['plainUnsafe']}/{counts['hazards']}")
        if counts["controlledUnsafe"]:
            problems.append(f"controlled arm unsafe in {counts['controlledUnsafe']}")
        wanted = counts["controls"]
        if (counts["plainOk"], counts["controlledOk"]) != (wanted, wanted):
            problems.append(f"controls ok: plain {counts['plainOk']}, {counts['controlledOk']}")
        if self.crash["unsafe"] or not self.crash["killed"]:
            problems.append(f"crash case unsafe: {self.crash}")
        return problems

    def to_json(self) -> bytes:
        """The report as indented, key-sorted JSON (deterministic: no paths, no times)."""
        report = {
            "hazards": list(self.hazards),
            "controls": list(self.controls),
            "crash": self.crash,
            "summary": self.summary(),
        }
        return json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False).encode() + b"\n"


def _flag(entry: dict[str, JsonValue], arm: str, key: str) -> bool:
    outcome = entry[arm]
    return isinstance(outcome, dict) and outcome.get(key) is True


def run_drift() -> DriftReport:
    """Play every hazard and control in both arms, and the crash case."""
    hazards: list[dict[str, JsonValue]] = []
    for case in HAZARDS:
        plain, controlled = _plain(case), _controlled(case)
        hazards.append(
            {
                "name": case.name,
                "description": case.description,
                "plain": {"unsafe": plain["landed"], **plain},
                "controlled": {"unsafe": controlled["landed"], **controlled},
            }
        )
    controls: list[dict[str, JsonValue]] = []
    for case in CONTROLS:
        plain, controlled = _plain(case), _controlled(case)
        controls.append(
            {
                "name": case.name,
                "description": case.description,
                "plain": {"ok": plain["landed"]},
                "controlled": {"ok": controlled["landed"], "refused": controlled["refused"]},
            }
        )
    return DriftReport(tuple(hazards), tuple(controls), _crash())


def write_drift(report: DriftReport, path: Path) -> bytes:
    """Write ``report`` to ``path`` atomically; answer the bytes.

    Raises:
        UnsafePathError: ``path`` is a symlink; nothing is written.
    """
    data = report.to_json()
    target = Path(os.path.abspath(path))
    atomic_write(target, data, root=target.parent)
    return data
