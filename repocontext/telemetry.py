"""Prometheus metrics of a serving process (exposed by the HTTP app at ``/metrics``).

One :class:`Telemetry` per server process owns its own registry (never the global one, so
several apps in one test process do not collide). Tool calls are observed where every call
passes (:class:`repocontext.mcp.grants.GrantedServer`); token figures, index phases and the
store size are read from the workspace at scrape time, so they cost nothing between scrapes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Final

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from repocontext.errors import RepoContextError

if TYPE_CHECKING:
    from repocontext.workspace import Workspace

__all__ = ["CONTENT_TYPE", "Telemetry"]

CONTENT_TYPE: Final = "text/plain; version=0.0.4; charset=utf-8"
_LATENCY_BUCKETS: Final = (0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
_INDEX_PHASES: Final = ("walking", "parsing", "applying", "embedding", "reconciling")


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
        stats = self._workspace.call_stats
        for name, text, value in (
            ("repocontext_context_calls", "Context bundles served.", stats.total_calls),
            (
                "repocontext_response_tokens",
                "Tokens of the context bundles sent (as the MCP client receives them).",
                stats.total_response_tokens,
            ),
            (
                "repocontext_reads_replaced_tokens",
                "Tokens reading the delivered files whole would have cost.",
                stats.total_reads_replaced_tokens,
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
                job = self._workspace.index.status(repo.repo_id)
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
