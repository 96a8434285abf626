"""The ``doctor`` report: versions, the data directory, the store's backend and statistics.

``backend`` names the engine (``lmdb`` or ``postgresql``), where it lives (a database URL is
shown without its password), whether it answered and one read's round-trip latency.
"""

from __future__ import annotations

import platform
from importlib.metadata import PackageNotFoundError, version

from repocontext.errors import StoreNotFoundError, StoreUnavailableError
from repocontext.settings import Settings
from repocontext.store import redact_url
from repocontext.workspace import Workspace

__all__ = ["DISTRIBUTIONS", "doctor_report", "render_text"]

DISTRIBUTIONS = ("repocontext-lattice", "lmdb", "psycopg", "pycrdt", "mcp")

_Report = dict[str, object]


def doctor_report(settings: Settings) -> _Report:
    """Return the doctor report as a JSON-ready mapping.

    The store is opened read-only and never created: a missing store is reported as such.
    """
    versions = {"python": platform.python_version()}
    versions.update({_short(name): _version(name) for name in DISTRIBUTIONS})
    report: _Report = {"versions": versions, "dataDir": str(settings.data_dir)}
    url = settings.store_url
    report["backend"] = {
        "engine": "postgresql" if url else "lmdb",
        "location": redact_url(url) if url else str(settings.data_dir / "store"),
        "reachable": False,
        "latencyMs": None,
    }
    try:
        with Workspace.open(settings, read_only=True) as workspace:
            probe = workspace.store_health()
            stats = workspace.stats()
    except (StoreUnavailableError, StoreNotFoundError) as exc:
        report["store"] = None
        report["storeError"] = exc.to_dict()
        return report
    report["backend"] = {
        "engine": probe.engine,
        "location": probe.location,
        "reachable": probe.reachable,
        "latencyMs": probe.latency_ms,
    }
    report["store"] = {
        "path": stats.path,
        "engine": stats.engine,
        "replica": stats.replica,
        "lastSeq": stats.last_seq,
        "feedFloor": stats.feed_floor,
        "mapBytes": stats.map_bytes,
        "usedBytes": stats.used_bytes,
        "fileBytes": stats.file_bytes,
        "records": dict(stats.records),
    }
    return report


def render_text(report: _Report) -> str:
    """Render the report for a terminal."""
    versions = report["versions"]
    lines = [f"{name:<12} {value}" for name, value in _items(versions)]
    lines.append(f"{'data dir':<12} {report['dataDir']}")
    backend = report.get("backend")
    if isinstance(backend, dict):
        answer = (
            f"reachable, {backend['latencyMs']} ms round trip"
            if backend["reachable"]
            else "not reachable"
        )
        lines.append(f"{'backend':<12} {backend['engine']} at {backend['location']} ({answer})")
    store = report.get("store")
    if not isinstance(store, dict):
        error = report.get("storeError")
        message = error.get("message") if isinstance(error, dict) else "unknown"
        lines.append(f"{'store':<12} not available ({message})")
        lines.append(f"{'':<12} `repocontext serve` creates it on first start")
        return "\n".join(lines)
    lines.append(f"{'store':<12} {store['path']} ({store['engine']}, replica {store['replica']})")
    feed = f"change feed after seq {store['feedFloor']}" if store["feedFloor"] else "whole feed"
    lines.append(
        f"{'':<12} last seq {store['lastSeq']} ({feed}), {store['fileBytes']} bytes on disk"
    )
    lines.extend(f"{'':<12} {tree}: {count}" for tree, count in _items(store["records"]))
    return "\n".join(lines)


def _items(value: object) -> list[tuple[str, object]]:
    return list(value.items()) if isinstance(value, dict) else []


def _short(distribution: str) -> str:
    return "repocontext" if distribution == "repocontext-lattice" else distribution


def _version(distribution: str) -> str:
    try:
        return version(distribution)
    except PackageNotFoundError:
        return "not installed"
