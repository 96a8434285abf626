"""Evidence: deterministic suites that show the runtime's guarantees hold.

The safety suite (:func:`run_safety_suite`) runs 240 cases in five groups of 48 (risk is
never silently downgraded; the worker protocol fails closed; paths stay inside the
repository; patch lowering is exact; the budget guard fails closed) on the real code paths,
and :func:`write_report` publishes them as ``docs/evidence/safety-frontier.json`` only when
all 240 ran and passed. See ``docs/lattice-evidence.md``.

The first-drift suite (:func:`run_drift`) plays twelve hazards and seven matched controls
through a plain edit path and under explicit control (``docs/continuity.md``).
"""

from lattice_runtime.evidence.case import GROUP_SIZE, GROUPS, SafetyCase, SafetyGroup
from lattice_runtime.evidence.drift import DEFAULT_DRIFT_PATH, DriftReport, run_drift, write_drift
from lattice_runtime.evidence.report import (
    DEFAULT_REPORT_PATH,
    REPORT_SCHEMA_VERSION,
    build_report,
    cases_digest,
    incomplete_reasons,
    report_bytes,
    write_report,
)
from lattice_runtime.evidence.suite import SUITE_SIZE, run_extra_checks, run_safety_suite

__all__ = [
    "DEFAULT_DRIFT_PATH",
    "DEFAULT_REPORT_PATH",
    "GROUPS",
    "GROUP_SIZE",
    "REPORT_SCHEMA_VERSION",
    "SUITE_SIZE",
    "DriftReport",
    "SafetyCase",
    "SafetyGroup",
    "build_report",
    "cases_digest",
    "incomplete_reasons",
    "report_bytes",
    "run_drift",
    "run_extra_checks",
    "run_safety_suite",
    "write_drift",
    "write_report",
]
