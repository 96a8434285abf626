"""The 240-case safety suite runs in the normal test run, and its published report is current."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from lattice_runtime.cli import app
from lattice_runtime.cli.evidence import publish_safety
from lattice_runtime.errors import LatticeError, UnsafePathError
from lattice_runtime.evidence import (
    GROUPS,
    SafetyCase,
    build_report,
    cases_digest,
    report_bytes,
    run_extra_checks,
    run_safety_suite,
    write_report,
)

ROOT = Path(__file__).resolve().parents[2]
PUBLISHED = ROOT / "docs" / "evidence" / "safety-frontier.json"
CASES = run_safety_suite()
EXTRA = run_extra_checks()


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_each_safety_case_holds(case: SafetyCase) -> None:
    assert case.passed, f"{case.description}: expected {case.expected!r}, got {case.actual!r}"


@pytest.mark.parametrize("check", EXTRA, ids=[check.id for check in EXTRA])
def test_each_extra_check_holds(check: SafetyCase) -> None:
    assert check.passed, f"{check.description}: expected {check.expected!r}, got {check.actual!r}"


def test_the_suite_has_240_cases_in_five_groups_of_48_with_unique_ids() -> None:
    assert len(CASES) == 240
    assert Counter(case.group for case in CASES) == {group.name: 48 for group in GROUPS}
    assert [case.group for case in CASES] == [group.name for group in GROUPS for _ in range(48)]
    assert len({case.id for case in (*CASES, *EXTRA)}) == len(CASES) + len(EXTRA)
    assert all(case.id.startswith(f"{case.group}.") for case in CASES)


def test_each_group_holds_the_kinds_the_issue_lists() -> None:
    kinds = Counter(case.id.rsplit(".", 1)[0] for case in CASES if case.group != "budget")
    assert {kind: n for kind, n in kinds.items() if kind.startswith("protocol")} == {
        "protocol.context": 12,
        "protocol.patch": 12,
        "protocol.ambiguous": 12,
        "protocol.malformed": 12,
    }
    assert {kind: n for kind, n in kinds.items() if kind.startswith(("paths", "lowering"))} == {
        "paths.safe": 24,
        "paths.parent": 8,
        "paths.nested-parent": 8,
        "paths.absolute": 8,
        "lowering.unique": 24,
        "lowering.ambiguous": 12,
        "lowering.absent": 12,
    }
    risks = Counter(case.id.split(".")[1] for case in CASES if case.group == "risk")
    assert risks == {"high": 16, "low": 16, "medium": 16}
    refusals = Counter(case.expected for case in CASES if case.group == "lowering")
    assert refusals["refused: replacement_source_ambiguous"] == 12
    assert refusals["refused: replacement_outside_grant"] == 12
    budget = Counter(case.expected.split(" ")[0] for case in CASES if case.group == "budget")
    assert budget == {"allowed": 36, "refused": 12}


def test_the_committed_report_equals_what_the_suite_produces_now() -> None:
    produced = report_bytes(build_report(CASES, EXTRA))
    assert PUBLISHED.read_bytes() == produced, (
        "docs/evidence/safety-frontier.json is stale: run `lattice evidence safety`"
    )


def test_the_report_has_totals_groups_and_a_digest_of_the_cases() -> None:
    report = json.loads(PUBLISHED.read_text(encoding="utf-8"))
    assert report["totals"] == {"cases": 240, "passed": 240, "failed": 0}
    assert [group["name"] for group in report["groups"]] == [group.name for group in GROUPS]
    assert all(
        {group["total"], group["passed"], group["failed"]} == {48, 0} for group in report["groups"]
    )
    assert report["casesSha256"] == cases_digest(CASES)
    assert report["extraChecks"]["failed"] == 0


def test_two_runs_of_the_suite_give_the_same_cases() -> None:
    assert cases_digest(run_safety_suite()) == cases_digest(CASES)


def test_the_writer_refuses_a_failed_case_and_writes_nothing(tmp_path: Path) -> None:
    broken = list(CASES)
    broken[100] = dataclasses.replace(broken[100], actual="accepted: oops", passed=False)
    target = tmp_path / "out" / "report.json"
    with pytest.raises(LatticeError, match=broken[100].id):
        write_report(broken, target, EXTRA)
    assert not target.exists()


def test_the_writer_refuses_an_incomplete_run(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    with pytest.raises(LatticeError, match="incomplete: 239 cases"):
        write_report(CASES[:-1], target, EXTRA)
    with pytest.raises(LatticeError, match="incomplete"):
        write_report((*CASES[48:], *CASES[:48]), target, EXTRA)  # groups out of order
    assert list(tmp_path.iterdir()) == []


def test_the_writer_refuses_a_failed_extra_check_or_a_repeated_id(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    failed = (dataclasses.replace(EXTRA[0], passed=False, actual="allowed"), *EXTRA[1:])
    with pytest.raises(LatticeError, match=EXTRA[0].id):
        write_report(CASES, target, failed)
    repeated = (*CASES[:-1], dataclasses.replace(CASES[-1], id=CASES[0].id))
    with pytest.raises(LatticeError, match="repeated case id"):
        write_report(repeated, target, EXTRA)
    assert not target.exists()


def test_the_writer_writes_a_passed_run_whole_and_refuses_a_symlink(tmp_path: Path) -> None:
    target = tmp_path / "new" / "dir" / "report.json"
    data = write_report(CASES, target, EXTRA)
    assert target.read_bytes() == data == PUBLISHED.read_bytes()
    assert sorted(path.name for path in target.parent.iterdir()) == ["report.json"]
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "elsewhere.json")
    with pytest.raises(UnsafePathError):
        write_report(CASES, link, EXTRA)
    assert not (tmp_path / "elsewhere.json").exists()


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_lattice_evidence_safety_prints_a_table_and_writes_the_report(tmp_path: Path) -> None:
    target = tmp_path / "safety.json"
    code, out, err = invoke("evidence", "safety", "--write", str(target))
    assert code == 0, out + err
    lines = out.splitlines()
    assert any(line.split()[:4] == ["risk", "48", "48", "0"] for line in lines)
    assert any(line.split()[:4] == ["total", "240", "240", "0"] for line in lines)
    assert f"wrote {target}" in err
    assert target.read_bytes() == PUBLISHED.read_bytes()


def test_lattice_evidence_safety_json_prints_the_report(tmp_path: Path) -> None:
    code, out, _ = invoke("evidence", "safety", "--json", "--write", str(tmp_path / "r.json"))
    assert code == 0
    report = json.loads(out)
    assert report["totals"] == {"cases": 240, "passed": 240, "failed": 0}
    assert len(report["cases"]) == 240


def test_lattice_evidence_safety_writes_under_the_current_directory_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, _ = invoke("evidence", "safety")
    assert code == 0
    written = tmp_path / "docs" / "evidence" / "safety-frontier.json"
    assert written.read_bytes() == PUBLISHED.read_bytes()


def test_lattice_evidence_safety_refuses_a_symlinked_destination(tmp_path: Path) -> None:
    link = tmp_path / "r.json"
    link.symlink_to(tmp_path / "elsewhere.json")
    code, _, err = invoke("evidence", "safety", "--write", str(link))
    assert code == 2
    assert "error [lattice.unsafe_path]" in err
    assert not (tmp_path / "elsewhere.json").exists()


def test_publishing_a_run_with_a_failed_case_lists_it_exits_1_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = (
        *CASES[:5],
        dataclasses.replace(CASES[5], actual="risk=low", passed=False),
        *CASES[6:],
    )
    target = tmp_path / "report.json"
    with pytest.raises(typer.Exit) as exited:
        publish_safety(broken, EXTRA, target)
    assert exited.value.exit_code == 1
    captured = capsys.readouterr()
    assert f"FAIL {CASES[5].id} failed" in captured.err
    assert f"not written: {target}" in captured.err
    assert any(line.split()[:4] == ["risk", "48", "47", "1"] for line in captured.out.splitlines())
    assert not target.exists()


def test_the_lowering_table_puts_each_source_where_its_case_says() -> None:
    from lattice_runtime.evidence._lowering_cases import (
        ABSENT,
        AMBIGUOUS,
        GRANTED,
        LINES,
        SLICE,
        unique_replacements,
    )

    text = "".join(LINES)
    granted = "".join(LINES[GRANTED[0] - 1 : GRANTED[1]])
    assert granted == "".join(SLICE) and len(SLICE) == 26 and len(set(SLICE)) == 25
    assert all(text.count(old) == 1 and old in granted for old, _ in unique_replacements())
    assert all(old == "" or granted.count(old) >= 2 for old in AMBIGUOUS)
    assert all(text.count(old) >= 1 and old not in granted for old in ABSENT)
