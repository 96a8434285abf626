"""The safety report: ``docs/evidence/safety-frontier.json``, and the rule for writing it.

:func:`build_report` turns the cases into the report's wire form (camelCase JSON);
:func:`report_bytes` encodes it deterministically (sorted keys, two-space indent, UTF-8, one
final newline, no timestamps), so the committed file changes only when a case does;
:func:`write_report` writes it atomically and **refuses** unless the run is complete (exactly
the 240 cases, 48 in each group, in order, ids unique) and every case and extra check passed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from lattice_runtime._files import atomic_write
from lattice_runtime.compile import TASK_SCHEMA_VERSION
from lattice_runtime.errors import LatticeError
from lattice_runtime.evidence.case import GROUP_SIZE, GROUPS, SafetyCase
from lattice_runtime.protocol import PROTOCOL_VERSION

__all__ = [
    "DEFAULT_REPORT_PATH",
    "REPORT_SCHEMA_VERSION",
    "build_report",
    "cases_digest",
    "incomplete_reasons",
    "report_bytes",
    "write_report",
]

REPORT_SCHEMA_VERSION: Final = 1
DEFAULT_REPORT_PATH: Final = Path("docs/evidence/safety-frontier.json")
"""Where ``lattice evidence safety`` writes, relative to the current directory."""


def _case_wire(case: SafetyCase) -> dict[str, object]:
    return {
        "group": case.group,
        "id": case.id,
        "description": case.description,
        "expected": case.expected,
        "actual": case.actual,
        "passed": case.passed,
    }


def _tally(cases: Sequence[SafetyCase]) -> dict[str, int]:
    passed = sum(case.passed for case in cases)
    return {"cases": len(cases), "passed": passed, "failed": len(cases) - passed}


def cases_digest(cases: Sequence[SafetyCase]) -> str:
    """SHA-256 of the cases' canonical JSON (sorted keys, no whitespace, ASCII).

    Args:
        cases: The cases, in order.

    Returns:
        64 hex digits; the same cases always give the same digest.
    """
    canonical = json.dumps(
        [_case_wire(case) for case in cases], sort_keys=True, separators=(",", ":")
    )
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()


def build_report(
    cases: Sequence[SafetyCase], extra_checks: Sequence[SafetyCase] = ()
) -> dict[str, object]:
    """The report's wire form.

    Args:
        cases: The suite's cases (normally the 240 of :func:`.suite.run_safety_suite`).
        extra_checks: The checks beyond the 240 (:func:`.suite.run_extra_checks`).

    Returns:
        ``{"schemaVersion", "suite", "protocolVersion", "taskSchemaVersion", "totals",
        "groups", "cases", "casesSha256", "extraChecks"}``; ``groups`` lists each group's
        ``name``, ``claim``, ``total``, ``passed``, ``failed`` in suite order.
    """
    groups: list[dict[str, object]] = []
    for group in GROUPS:
        tally = _tally([case for case in cases if case.group == group.name])
        groups.append(
            {
                "name": group.name,
                "claim": group.claim,
                "total": tally["cases"],
                "passed": tally["passed"],
                "failed": tally["failed"],
            }
        )
    return {
        "schemaVersion": REPORT_SCHEMA_VERSION,
        "suite": "safety",
        "protocolVersion": PROTOCOL_VERSION,
        "taskSchemaVersion": TASK_SCHEMA_VERSION,
        "totals": _tally(cases),
        "groups": groups,
        "cases": [_case_wire(case) for case in cases],
        "casesSha256": cases_digest(cases),
        "extraChecks": {
            **_tally(extra_checks),
            "checks": [_case_wire(case) for case in extra_checks],
        },
    }


def report_bytes(report: dict[str, object]) -> bytes:
    """The report as the file's bytes: sorted keys, indent 2, UTF-8, a final newline.

    Args:
        report: :func:`build_report`'s value.

    Returns:
        The bytes written to (and compared with) the report file.
    """
    return (json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def incomplete_reasons(
    cases: Sequence[SafetyCase], extra_checks: Sequence[SafetyCase] = ()
) -> tuple[str, ...]:
    """Why these cases may not be published (empty: they may).

    Args:
        cases: The suite's cases.
        extra_checks: The checks beyond the 240.

    Returns:
        One line per problem: a wrong count or order, a repeated id, each failed case.
    """
    problems: list[str] = []
    expected_groups = [group.name for group in GROUPS for _ in range(GROUP_SIZE)]
    if [case.group for case in cases] != expected_groups:
        problems.append(
            f"the run is incomplete: {len(cases)} cases, expected {len(expected_groups)} "
            f"({GROUP_SIZE} in each of {', '.join(group.name for group in GROUPS)}, in order)"
        )
    ids = [case.id for case in (*cases, *extra_checks)]
    problems += [
        f"repeated case id {case_id}" for case_id in sorted(set(ids)) if ids.count(case_id) > 1
    ]
    problems += [
        f"{case.id} failed: expected {case.expected!r}, got {case.actual!r}"
        for case in (*cases, *extra_checks)
        if not case.passed
    ]
    return tuple(problems)


def write_report(
    cases: Sequence[SafetyCase],
    path: Path,
    extra_checks: Sequence[SafetyCase] = (),
) -> bytes:
    """Write the report to ``path`` atomically, only for a complete, all-passed run.

    Args:
        cases: The suite's cases (all 240 must have run and passed).
        path: The destination file (its directory is made when missing).
        extra_checks: The checks beyond the 240 (all must have passed).

    Returns:
        The bytes written.

    Raises:
        LatticeError: The run is incomplete or a case failed (the message lists why);
            nothing is written.
        UnsafePathError: ``path`` is a symlink; nothing is written.
    """
    problems = incomplete_reasons(cases, extra_checks)
    if problems:
        raise LatticeError(
            "refusing to write the safety report: " + "; ".join(problems),
            hint="Fix the failing guarantee (or the case) and run the suite again.",
        )
    data = report_bytes(build_report(cases, extra_checks))
    target = Path(path)
    atomic_write(target, data, root=target.parent)
    target.chmod(0o644)  # a published document, not private metadata (mkstemp made it 0600)
    return data
