"""``lattice evidence safety`` and ``lattice evidence drift``: run a suite, publish its report.

``drift`` plays the first-drift hazards (``docs/continuity.md``) and writes
``docs/evidence/first-drift.json`` when the result is the expected one.

Runs every case, prints the report (``--json``) or one line per group, and writes
``docs/evidence/safety-frontier.json`` (relative to the current directory; ``--write PATH``
picks another file) only when all 240 cases and the extra checks passed. Otherwise it lists
the failing cases on stderr, writes nothing and exits 1.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lattice_runtime.cli.app import app, echo_json, fail_cleanly
from lattice_runtime.evidence import (
    DEFAULT_DRIFT_PATH,
    DEFAULT_REPORT_PATH,
    GROUPS,
    SafetyCase,
    build_report,
    incomplete_reasons,
    run_drift,
    run_extra_checks,
    run_safety_suite,
    write_drift,
    write_report,
)

__all__ = ["drift", "evidence_app", "publish_safety", "safety"]

evidence_app = typer.Typer(help="Run deterministic evidence suites and publish their reports.")
app.add_typer(evidence_app, name="evidence")


@evidence_app.command("safety")
def safety(
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    write: Annotated[
        Path,
        typer.Option(
            "--write",
            help="Where to write the report (default: docs/evidence/safety-frontier.json "
            "under the current directory).",
        ),
    ] = DEFAULT_REPORT_PATH,
) -> None:
    """Run the 240 safety cases; write the report only if every one passed."""
    publish_safety(run_safety_suite(), run_extra_checks(), write, as_json=as_json)


@evidence_app.command("drift")
def drift(
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    write: Annotated[
        Path,
        typer.Option(
            "--write",
            help="Where to write the report (default: docs/evidence/first-drift.json "
            "under the current directory).",
        ),
    ] = DEFAULT_DRIFT_PATH,
) -> None:
    """Play 12 drift hazards and 7 controls, plain and under explicit control; write the report.

    Writes only when the plain arm is unsafe in every hazard, the controlled arm in none,
    every control succeeds in both arms and the crash case lands nothing.
    """
    report = run_drift()
    if as_json:
        typer.echo(report.to_json().decode().rstrip("\n"))
    else:
        counts = report.summary()
        typer.echo(
            f"hazards {counts['hazards']}: unsafe plain {counts['plainUnsafe']}, "
            f"controlled {counts['controlledUnsafe']}; controls {counts['controls']}: ok plain "
            f"{counts['plainOk']}, controlled {counts['controlledOk']}; crash unsafe "
            f"{report.crash['unsafe']}"
        )
    problems = report.problems()
    if problems:
        for problem in problems:
            typer.echo(f"FAIL {problem}", err=True)
        typer.echo(f"not written: {write}", err=True)
        raise typer.Exit(1)
    with fail_cleanly():
        write_drift(report, write)
    typer.echo(f"wrote {write}", err=True)


def publish_safety(
    cases: tuple[SafetyCase, ...],
    extra: tuple[SafetyCase, ...],
    write: Path,
    *,
    as_json: bool = False,
) -> None:
    """Print the report of ``cases`` and write it to ``write`` if the run may be published.

    Raises:
        typer.Exit: 1 when a case failed or the run is incomplete (the problems go to
            stderr, nothing is written); 2 when the destination is refused.
    """
    if as_json:
        echo_json(build_report(cases, extra))
    else:
        _print_table(cases, extra)
    problems = incomplete_reasons(cases, extra)
    if problems:
        for problem in problems:
            typer.echo(f"FAIL {problem}", err=True)
        typer.echo(f"not written: {write}", err=True)
        raise typer.Exit(1)
    with fail_cleanly():
        write_report(cases, write, extra)
    typer.echo(f"wrote {write}", err=True)


def _print_table(cases: tuple[SafetyCase, ...], extra: tuple[SafetyCase, ...]) -> None:
    typer.echo(f"{'group':<10} {'total':>5} {'passed':>6} {'failed':>6}  claim")
    for group in GROUPS:
        mine = [case for case in cases if case.group == group.name]
        passed = sum(case.passed for case in mine)
        line = f"{group.name:<10} {len(mine):>5} {passed:>6} {len(mine) - passed:>6}"
        typer.echo(f"{line}  {group.claim}")
    passed = sum(case.passed for case in cases)
    typer.echo(f"{'total':<10} {len(cases):>5} {passed:>6} {len(cases) - passed:>6}")
    extra_passed = sum(case.passed for case in extra)
    typer.echo(
        f"{'extra':<10} {len(extra):>5} {extra_passed:>6} {len(extra) - extra_passed:>6}"
        "  malformed budget-guard input is refused (not counted)"
    )
