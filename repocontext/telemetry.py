"""What a serving process tells its operator: Prometheus metrics and its log lines.

One :class:`Telemetry` per server process owns its own registry (never the global one, so
several apps in one test process do not collide). Tool calls are observed where every call
passes (:class:`repocontext.mcp.grants.GrantedServer`); token figures, index phases and the
store size are read from the workspace at scrape time, so they cost nothing between scrapes.

:func:`configure_logging` gives the process one log format on stderr, for its own loggers,
the MCP SDK's and uvicorn's alike: one JSON object per line (:class:`JsonLineFormatter`) when
stderr is not a terminal, a readable line (:class:`ReadableFormatter`) when it is. Either way
a traceback is written whole (the JSON line's ``exc``), never wrapped or cut to a width. A
record logged with ``extra={"fields": {...}}`` (the HTTP access log) carries those fields as
keys of its JSON line.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Final, TextIO

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from repocontext.errors import RepoContextError

if TYPE_CHECKING:
    from repocontext.workspace import Workspace

__all__ = [
    "CONTENT_TYPE",
    "JsonLineFormatter",
    "ReadableFormatter",
    "Telemetry",
    "configure_logging",
]

CONTENT_TYPE: Final = "text/plain; version=0.0.4; charset=utf-8"
_LATENCY_BUCKETS: Final = (0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
_INDEX_PHASES: Final = ("walking", "parsing", "applying", "embedding", "reconciling")
_UVICORN_LOGGERS: Final = ("uvicorn", "uvicorn.error", "uvicorn.access", "uvicorn.asgi")
_BASE_KEYS: Final = ("time", "level", "logger", "message", "exc", "stack")
_OURS: Final = "_repocontext_handler"
"""Marks the handler :func:`configure_logging` installed (a second call replaces it)."""


class Telemetry:
    """Counters and histograms of one serving process."""

    def __init__(self, workspace: Workspace | None = None) -> None:
        """Create the instruments; with a workspace, also its scrape-time figures."""
        self.registry = CollectorRegistry(auto_describe=True)
        self.tool_calls = Counter(
            "repocontext_tool_calls",
            "MCP tool calls by tool and outcome (ok, error, forbidden).",
            ("tool", "outcome"),
            registry=self.registry,
        )
        self.tool_latency = Histogram(
            "repocontext_tool_latency_seconds",
            "Wall time of MCP tool calls.",
            ("tool",),
            buckets=_LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.http_requests = Counter(
            "repocontext_http_requests",
            "HTTP requests by route family and status code.",
            ("route", "status"),
            registry=self.registry,
        )
        if workspace is not None:
            self.registry.register(_WorkspaceCollector(workspace))

    def observe_tool(self, tool: str, seconds: float, outcome: str) -> None:
        """Count one tool call and its latency."""
        self.tool_calls.labels(tool, outcome).inc()
        self.tool_latency.labels(tool).observe(seconds)

    def observe_http(self, route: str, status: int) -> None:
        """Count one HTTP request."""
        self.http_requests.labels(route, str(status)).inc()

    def render(self) -> bytes:
        """Return the registry in the Prometheus text exposition format."""
        return generate_latest(self.registry)


class _WorkspaceCollector(Collector):
    """Figures read from the workspace when Prometheus scrapes."""

    def __init__(self, workspace: Workspace) -> None:
        self._workspace = workspace

    def describe(self) -> list[Metric]:
        # Scrape-time figures have no fixed label sets to describe up front.
        return []

    def collect(self) -> Iterator[Metric]:
        stats = self._workspace.usage_totals()
        for name, text, value in (
            ("repocontext_context_calls", "Context bundles served.", stats.calls),
            (
                "repocontext_response_tokens",
                "Tokens of the context bundles sent (as the MCP client receives them).",
                stats.response_tokens,
            ),
            (
                "repocontext_reads_replaced_tokens",
                "Tokens reading the delivered files whole would have cost.",
                stats.reads_replaced_tokens,
            ),
        ):
            yield CounterMetricFamily(name, text, value=value)
        yield from self._index_figures()
        yield from self._store_figures()

    def _index_figures(self) -> Iterator[Metric]:
        phase = GaugeMetricFamily(
            "repocontext_index_phase",
            "1 for the phase each repository's index job is in (running jobs only).",
            labels=("repo", "phase"),
        )
        status = GaugeMetricFamily(
            "repocontext_index_files",
            "Files in each repository's index.",
            labels=("repo",),
        )
        vectors = GaugeMetricFamily(
            "repocontext_index_vectors",
            "Vectors in each repository's semantic index.",
            labels=("repo",),
        )
        for repo in self._workspace.list_repos():
            try:
                job = self._workspace.index_status(repo.repo_id)
            except RepoContextError:  # removed between the listing and this read
                continue
            for name in _INDEX_PHASES:
                running = job.status == "running" and job.phase == name
                phase.add_metric((repo.repo_id, name), 1.0 if running else 0.0)
            status.add_metric((repo.repo_id,), float(repo.files))
            vectors.add_metric((repo.repo_id,), float(repo.vectors))
        yield from (phase, status, vectors)

    def _store_figures(self) -> Iterator[Metric]:
        stats = self._workspace.stats()
        yield GaugeMetricFamily(
            "repocontext_store_size_bytes",
            "Bytes the store's LMDB map uses.",
            value=float(stats.used_bytes),
        )
        records = GaugeMetricFamily(
            "repocontext_store_records", "Records per store tree.", labels=("tree",)
        )
        for tree, count in sorted(stats.records.items()):
            records.add_metric((tree,), float(count))
        yield records


def configure_logging(
    stream: TextIO | None = None, *, level: int = logging.INFO
) -> logging.Handler:
    """Send every log record of the process to ``stream`` (stderr) in one format.

    JSON lines when ``stream`` is not a terminal, readable lines when it is (see the module
    docstring). Installs one handler on the root logger (replacing the one an earlier call
    installed; other handlers stay) and hands uvicorn's loggers to it, so they must be run
    with ``log_config=None``. Call it before the MCP server is built: the SDK installs its
    own (rich) handler only on a root logger that has none.

    Args:
        stream: Where lines go; default: ``sys.stderr``.
        level: The root logger's level.

    Returns:
        The installed handler.
    """
    stream = stream if stream is not None else sys.stderr
    handler = logging.StreamHandler(stream)
    handler.setFormatter(ReadableFormatter() if _is_terminal(stream) else JsonLineFormatter())
    setattr(handler, _OURS, True)
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, _OURS, False)]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    for name in _UVICORN_LOGGERS:
        logger = logging.getLogger(name)
        logger.handlers.clear()
        logger.propagate = True
    return handler


class JsonLineFormatter(logging.Formatter):
    """One JSON object per record, on one line: time, level, logger, message, fields, exc.

    ``time`` is UTC ISO 8601 with milliseconds; ``exc`` is the whole traceback (its newlines
    escaped, so the record stays one line); the record's ``fields`` (a mapping passed as
    ``extra={"fields": ...}``) become further keys, never replacing the ones above.
    """

    def format(self, record: logging.LogRecord) -> str:
        """Return the record as one line of JSON."""
        line: dict[str, object] = {
            "time": _utc(record.created),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        line |= {key: value for key, value in _fields(record).items() if key not in _BASE_KEYS}
        if record.exc_info:
            line["exc"] = self.formatException(record.exc_info)
        elif record.exc_text:
            line["exc"] = record.exc_text
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        # ASCII escapes: no raw U+2028 or similar that a line splitter would break on.
        return json.dumps(line, default=str, separators=(",", ":"))


class ReadableFormatter(logging.Formatter):
    """``<UTC time> <LEVEL> <logger>: <message> key=value...`` and the whole traceback below."""

    def __init__(self) -> None:
        """Use the one readable layout (no width limit)."""
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        """Return the record's time as UTC ISO 8601 with milliseconds (as in JSON lines)."""
        return _utc(record.created)

    def formatMessage(self, record: logging.LogRecord) -> str:
        """Return the line with the record's fields appended as ``key=value``."""
        extra = "".join(f" {key}={value}" for key, value in _fields(record).items())
        return super().formatMessage(record) + extra


def _fields(record: logging.LogRecord) -> Mapping[str, object]:
    fields = getattr(record, "fields", None)
    if not isinstance(fields, Mapping):
        return {}
    return {str(key): value for key, value in fields.items()}


def _utc(created: float) -> str:
    seconds = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(created))
    return f"{seconds}.{int(created * 1000) % 1000:03d}Z"


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or file-less stream
        return False
