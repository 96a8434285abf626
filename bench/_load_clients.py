"""The clients of the load benchmarks and what they measure (``bench/load.py``, ``bench/scale.py``).

Each client is a real ``mcp`` client over streamable HTTP with its own session, calling without
pause a random mix of ``repocontext_search``, ``repocontext_context``, ``repocontext_recall``
and ``repocontext_remember`` (weights :data:`MIX`); clients run as asyncio tasks in client
processes (:func:`client_process`), each reporting a :class:`Window`, gathered into a
:class:`Result` per load window.
"""

from __future__ import annotations

import asyncio
import math
import os
import random
import resource
import time
from collections import Counter
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Event
from typing import Any

TOOLS = ("repocontext_search", "repocontext_context", "repocontext_recall", "repocontext_remember")
# An agent's mix: mostly lookups, a context bundle now and then, an occasional note.
MIX = (4, 2, 3, 1)
KEY_POOL = 64
UNITS = 14  # bench/index.py's source-sized files hold up to this many HandlerN/processN units


@dataclass
class Window:
    """What one client process measured in one load window."""

    latencies: dict[str, list[float]] = field(default_factory=lambda: {t: [] for t in TOOLS})
    errors: list[str] = field(default_factory=list)
    paths: Counter[str] = field(default_factory=Counter)  # search retrievalPath
    started: float = 0.0  # wall clock, comparable across processes
    ended: float = 0.0
    cpu_s: float = 0.0  # this process's user + system CPU during the window


# -- the client side -------------------------------------------------------------------------


def _arguments(
    tool: str, rng: random.Random, files: int, repo: str, keys: list[str], name: str
) -> dict[str, Any]:
    i, u = rng.randrange(files), rng.randrange(UNITS)
    if tool == "repocontext_search":
        query = rng.choice(
            [
                f"Handler{u} handle",
                f"process_{u} values scale",
                f"C{i}",
                f"f{i}",
                "registry lookup limit",
            ]
        )
        return {"repoId": repo, "query": query, "k": 10}
    if tool == "repocontext_context":
        task = rng.choice(
            [
                f"change how Handler{u} filters request items by limit",
                f"fix the scaling in process{u}",
                f"where is f{i} defined and who calls it",
            ]
        )
        return {"repoId": repo, "task": task}
    if tool == "repocontext_recall":
        return {"key": rng.choice(keys)}
    note: dict[str, Any] = {
        "repoId": repo,
        "topic": f"load-{name}",
        "title": f"note {i} by {name}",
        "body": f"Handler{u} drops items above its limit; f{i} depends on it. " * 4,
        "tags": ["load", name],
    }
    files_seen = [key for key in keys if key.startswith(f"repo/{repo}/file/")]
    if files_seen:
        note["addLinks"] = {"anchoredTo": [rng.choice(files_seen)]}
    return note


def _harvest(tool: str, content: dict[str, Any], keys: list[str], window: Window) -> None:
    """Keep keys the next recalls and links can use (search hits, new notes)."""
    found: list[str] = []
    if tool == "repocontext_search":
        window.paths[str(content.get("retrievalPath"))] += 1
        found = [hit["key"] for hit in content.get("hits", [])[:2]]
    elif tool == "repocontext_remember":
        found = [content["key"]]
    for key in found:
        if len(keys) >= KEY_POOL:
            keys.pop(0)
        keys.append(key)


async def _one_client(
    client: Any, name: str, setup: dict[str, Any], deadline: float, window: Window
) -> None:
    rng = random.Random(name)
    repo, files = setup["repo"], setup["files"]
    keys = list(setup["keys"])
    while time.perf_counter() < deadline:
        tool = rng.choices(TOOLS, weights=setup["weights"])[0]
        args = _arguments(tool, rng, files, repo, keys, name)
        start = time.perf_counter()
        try:
            result = await client.call_tool(tool, args)
        except Exception as exc:  # the benchmark's edge: count it, keep the load going
            window.errors.append(f"{tool}: {exc!r}")
            continue
        elapsed = time.perf_counter() - start
        if result.is_error or not isinstance(result.structured_content, dict):
            window.errors.append(f"{tool}: {result.content}")
            continue
        window.latencies[tool].append(elapsed)
        _harvest(tool, result.structured_content, keys, window)


async def _clients(
    url: str, names: list[str], setup: dict[str, Any], seconds: float, go: Event, ready: Queue[Any]
) -> Window:
    from mcp import Client

    window = Window()
    async with AsyncExitStack() as stack:
        clients = [await stack.enter_async_context(Client(url)) for _ in names]
        for client in clients:  # one call per session before the clock starts
            await client.call_tool(
                "repocontext_search", {"repoId": setup["repo"], "query": "warm up"}
            )
        ready.put(os.getpid())
        await asyncio.to_thread(go.wait)
        usage = resource.getrusage(resource.RUSAGE_SELF)
        window.started = time.time()
        deadline = time.perf_counter() + seconds
        await asyncio.gather(
            *(
                _one_client(c, n, setup, deadline, window)
                for c, n in zip(clients, names, strict=True)
            )
        )
        window.ended = time.time()
        after = resource.getrusage(resource.RUSAGE_SELF)
        window.cpu_s = after.ru_utime + after.ru_stime - usage.ru_utime - usage.ru_stime
    return window


def client_process(
    url: str,
    names: list[str],
    setup: dict[str, Any],
    seconds: float,
    go: Event,
    ready: Queue[Any],
    out: Queue[Any],
) -> None:
    """One client process: ``names`` sessions as asyncio tasks; puts its :class:`Window` on ``out``."""
    try:
        window = asyncio.run(_clients(url, names, setup, seconds, go, ready))
    except BaseException as exc:  # reported to the parent, which fails the run
        ready.put(os.getpid())
        window = Window(errors=[f"client process: {exc!r}"])
    out.put(window)


@dataclass
class Result:
    """One load window over all client processes."""

    workers: int
    clients: int
    procs: int
    seconds: float
    windows: list[Window]
    rss_start_mb: float = 0.0
    rss_end_mb: float = 0.0
    server_cpu_s: float = 0.0
    machine_cpu_s: float = 0.0
    """CPU every process of the machine used during the window (others share it)."""

    @property
    def elapsed(self) -> float:
        return max(w.ended for w in self.windows) - min(w.started for w in self.windows)

    @property
    def others_cpu_s(self) -> float:
        """CPU of processes that are neither the server nor the clients (other work)."""
        return max(0.0, self.machine_cpu_s - self.server_cpu_s - self.client_cpu_s)

    def samples(self, tool: str | None = None) -> list[float]:
        tools = TOOLS if tool is None else (tool,)
        return sorted(x for w in self.windows for t in tools for x in w.latencies[t])

    def rate(self, tool: str | None = None) -> float:
        return len(self.samples(tool)) / self.elapsed

    @property
    def errors(self) -> list[str]:
        return [e for w in self.windows for e in w.errors]

    @property
    def client_cpu_s(self) -> float:
        return sum(w.cpu_s for w in self.windows)

    @property
    def paths(self) -> Counter[str]:
        total: Counter[str] = Counter()
        for w in self.windows:
            total.update(w.paths)
        return total


def percentile(samples: list[float], q: float) -> float:
    """The nearest-rank percentile of sorted ``samples`` (0 when empty)."""
    return samples[max(math.ceil(q * len(samples)) - 1, 0)] if samples else 0.0


def result_rows(result: Result) -> list[str]:
    """Table rows ``| workers | clients | tool | calls | calls/s | p50 ms | p95 ms |`` of ``result``."""
    rows = []
    for tool in (*TOOLS, None):
        samples = result.samples(tool)
        label = tool or "**all**"
        rows.append(
            f"| {result.workers} | {result.clients} | {label} | {len(samples):,} "
            f"| {len(samples) / result.elapsed:,.1f} | {percentile(samples, 0.5) * 1000:.1f} "
            f"| {percentile(samples, 0.95) * 1000:.1f} |"
        )
    return rows
