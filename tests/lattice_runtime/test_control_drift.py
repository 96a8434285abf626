"""First-drift evidence: every hazard is unsafe plain and refused under control; controls pass."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from lattice_runtime.cli import app
from lattice_runtime.evidence import run_drift

ROOT = Path(__file__).resolve().parents[2]
PUBLISHED = ROOT / "docs" / "evidence" / "first-drift.json"

REFUSALS = {
    "unscoped_shell_mutation": "lattice.authorization_scope",
    "arguments_rewritten_after_guard": "lattice.authorization_scope",
    "contract_files_rewritten_together": "lattice.contract_anchor_mismatch",
}


def test_every_hazard_lands_plain_and_is_refused_under_control_while_controls_pass() -> None:
    report = run_drift()
    assert report.summary() == {
        "hazards": 12,
        "plainUnsafe": 12,
        "controlledUnsafe": 0,
        "controls": 7,
        "plainOk": 7,
        "controlledOk": 7,
    }
    for hazard in report.hazards:
        controlled = hazard["controlled"]
        assert isinstance(controlled, dict)
        expected = REFUSALS.get(str(hazard["name"]), "lattice.authorization_stale")
        assert controlled["refused"] == expected, hazard["name"]
    assert report.crash == {
        "killed": True,
        "landed": False,
        "receiptReusable": False,
        "unsafe": False,
    }
    assert report.problems() == []


def test_the_drift_command_writes_the_published_report_byte_for_byte(tmp_path: Path) -> None:
    written = tmp_path / "first-drift.json"
    result = CliRunner().invoke(app, ["evidence", "drift", "--write", str(written)])
    assert result.exit_code == 0, result.output
    assert "unsafe plain 12, controlled 0" in result.output
    assert written.read_bytes() == PUBLISHED.read_bytes()
