"""The wiring of one workspace: the domain services over one store, built once.

Every service shares the store and the clock; index runs, memory writes and archive restores
schedule the embedding pass, and so does what the change feed brings from other processes
(:mod:`repocontext.workspace.follower`), which also brings the keyword index to the head.
:class:`~repocontext.workspace.facade.Workspace` holds them privately and is the only caller.
"""

from __future__ import annotations

from dataclasses import dataclass

from repocontext.claims import ClaimService
from repocontext.index import IndexService
from repocontext.memory import MemoryService
from repocontext.pack.stats import StatsWindow
from repocontext.search import SearchService
from repocontext.search.semantic import SemanticService
from repocontext.settings import Settings
from repocontext.store import STRUCTURAL, Clock, Store
from repocontext.store.keys import repo_key
from repocontext.workspace.background import Background
from repocontext.workspace.follower import FeedFollower
from repocontext.workspace.registry import Registry

__all__ = ["Services"]


@dataclass(frozen=True, slots=True)
class Services:
    """The domain services of one workspace (none of them is public)."""

    registry: Registry
    semantic: SemanticService
    index: IndexService
    search: SearchService
    memory: MemoryService
    claims: ClaimService
    call_stats: StatsWindow
    background: Background

    @classmethod
    def wire(cls, settings: Settings, store: Store, clock: Clock) -> Services:
        """Build every service over ``store`` as ``settings`` configure them."""
        registry = Registry(store, clock, settings.workspace_root)
        semantic = SemanticService(store, settings.data_dir / "vectors", settings.embedder, clock)
        index = IndexService(
            store, clock, encoding=settings.token_encoding, on_changed=semantic.schedule
        )
        search = SearchService(store, settings.data_dir / "search", semantic)

        def catch_up(repo_id: str, seq: int) -> None:
            # (a repository removed since the event: its indexes were dropped, none is made)
            if store.get(STRUCTURAL, repo_key(repo_id)) is not None:
                search.sync(repo_id)
                semantic.schedule(repo_id, seq)

        follower = FeedFollower(
            store,
            catch_up,
            lambda: [info.repo_id for info in registry.iter_repos()],
            on_start=semantic.catch_up,
        )
        return cls(
            registry=registry,
            semantic=semantic,
            index=index,
            search=search,
            memory=MemoryService(store, on_write=semantic.schedule),
            claims=ClaimService(
                store,
                default_lease_seconds=settings.claim_default_lease_seconds,
                max_lease_seconds=settings.claim_max_lease_seconds,
            ),
            call_stats=StatsWindow(clock),
            background=Background(settings, store, index, registry, semantic.schedule, follower),
        )

    def close(self) -> None:
        """Stop the background work and close the derived indexes (not the store)."""
        self.background.stop()
        self.semantic.close()
        self.search.close()
