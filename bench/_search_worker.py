"""Time search and context calls of one code version on an indexed store (``bench/search.py``).

Run by ``bench/search.py --compare`` in a subprocess whose ``PYTHONPATH`` names the code to
time (this branch, or a ``git worktree`` of another), so both versions answer the same queries
on the same store in one run. Uses only names both versions have. Prints one JSON object of
latencies in seconds.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from repocontext.pack.request import ContextRequest
from repocontext.settings import Settings
from repocontext.workspace import Workspace


def timed(fn, items):  # type: ignore[no-untyped-def]
    """Wall-clock and CPU seconds of each call (CPU time: less sensitive to a shared machine)."""
    wall, cpu = [], []
    for item in items:
        start, start_cpu = time.perf_counter(), time.thread_time()
        fn(item)
        cpu.append(time.thread_time() - start_cpu)
        wall.append(time.perf_counter() - start)
    return wall, cpu


def _search_of(workspace, repo_id):  # type: ignore[no-untyped-def]
    """One search call and the search service, in either version's API.

    Before issue 22 the service was ``workspace.search``; since, ``search`` is a facade
    method taking a ``SearchRequest`` and the service is private.
    """
    service = getattr(workspace, "_search", None)
    if service is None:
        return (lambda q: workspace.search.search(repo_id, q, 10)), workspace.search
    from repocontext.search import SearchRequest

    return (lambda q: workspace.search(SearchRequest.of(repo_id, q, 10))), service


def main() -> None:
    data, workspace_root, repo_id, queries_file = sys.argv[1:5]
    queries = json.loads(Path(queries_file).read_text())
    settings = Settings(
        data_dir=Path(data), workspace_root=Path(workspace_root), reconcile="off", embedder="off"
    )
    with Workspace.open(settings) as workspace:
        search, service = _search_of(workspace, repo_id)
        search(queries[0])  # the keyword index at the head
        runs = {
            "search": timed(search, queries),
            "context": timed(
                lambda q: workspace.context(ContextRequest(repo_id, q, budget=8192)),
                queries[:100],
            ),
            "sync_at_head": timed(lambda _: service.sync(repo_id), range(300)),
        }
    figures = {name: wall for name, (wall, _) in runs.items()}
    figures.update({f"{name} cpu": cpu for name, (_, cpu) in runs.items()})
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
