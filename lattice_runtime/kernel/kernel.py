"""The context kernel: a task's pages, repository map and context faults over one repository.

:meth:`ContextKernel.open` indexes the repository (:mod:`.workspace`), reads its file nodes
and ranks them for the goal (:mod:`.relevance`). :meth:`~ContextKernel.initial_grant` then
serves the initial set (:mod:`.selection`) while the budget lasts, :meth:`~ContextKernel.fault`
serves a worker's ``context_request`` (:mod:`.faults`), and :meth:`~ContextKernel.refresh`
serves a granted page again only if its file is unchanged. See ``docs/lattice-kernel.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lattice_runtime.compile.task import TaskIR
from lattice_runtime.errors import BudgetExhaustedError, ContextError, StalePageError
from lattice_runtime.kernel.faults import Refusal, describe, resolve_item
from lattice_runtime.kernel.grant import ContextGrant, FaultRecord, PageLedger
from lattice_runtime.kernel.pages import (
    SLICE_CHARS,
    WHOLE_FILE_CHARS,
    WHOLE_FILE_CHARS_HIGH_RISK,
    ContextPage,
    PageRequest,
    current_fingerprint,
    read_context_page,
)
from lattice_runtime.kernel.relevance import Ranking, rank_files
from lattice_runtime.kernel.repomap import RepoMapView, render_repo_map
from lattice_runtime.kernel.scope import ScopeFilter
from lattice_runtime.kernel.selection import initial_requests
from lattice_runtime.kernel.workspace import Embedder, RepoIndex
from lattice_runtime.protocol.messages import ContextRequestItem
from repocontext.errors import RepoContextError
from repocontext.index import FileNode

__all__ = ["ContextKernel"]


class ContextKernel:
    """Pages, the repository map and context faults for one task over one repository."""

    def __init__(
        self, index: RepoIndex, task: TaskIR, nodes: Sequence[FileNode], ranking: Ranking
    ) -> None:
        """Hold an indexed repository and its ranking for ``task`` (use :meth:`open`).

        Raises:
            TaskInvalidError: A scope glob is not usable.
        """
        self.task = task
        self.index = index
        self.ranking = ranking
        self.scope = ScopeFilter(task.scope)
        self._nodes = {node.path: node for node in nodes}
        self._ledger = PageLedger(task.budget)
        self._faults: list[FaultRecord] = []
        self._initial_served = False

    @classmethod
    def open(cls, repo_root: Path, task: TaskIR, *, embedder: Embedder = "off") -> ContextKernel:
        """Index ``repo_root`` now (incrementally after the first time) and rank it for ``task``.

        Args:
            repo_root: The repository (its index lives in ``.lattice/index``).
            task: The compiled task: its goal, risk, scope and budget are used.
            embedder: ``off`` (keyword ranking, no model loaded) or an embedder for hybrid
                ranking.

        Raises:
            TaskInvalidError: A scope glob is not usable (checked before anything is indexed).
            ContextError: The repository cannot be indexed or read.
            UnsafePathError: ``<repo>/.lattice`` is a symlink or not a directory.
        """
        scope = ScopeFilter(task.scope)
        index = RepoIndex.open(repo_root, embedder=embedder)
        try:
            nodes = index.workspace.files(index.repo_id)
            ranking = rank_files(index.workspace, index.repo_id, task.goal, nodes, scope)
        except RepoContextError as exc:
            index.close()
            raise ContextError(f"cannot rank {repo_root} for the task: {exc}") from exc
        return cls(index, task, nodes, ranking)

    def __enter__(self) -> ContextKernel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the repository's workspace (idempotent)."""
        self.index.close()

    @property
    def whole_file_chars(self) -> int:
        """The longest file served whole (32,000 characters for a high-risk task)."""
        return WHOLE_FILE_CHARS_HIGH_RISK if self.task.risk == "high" else WHOLE_FILE_CHARS

    def pages(self) -> tuple[ContextPage, ...]:
        """Every page granted so far, in grant order."""
        return self._ledger.pages

    def faults(self) -> tuple[FaultRecord, ...]:
        """Every context fault served so far."""
        return tuple(self._faults)

    @property
    def tokens_used(self) -> int:
        """Tokens of every page granted so far."""
        return self._ledger.tokens

    def initial_grant(self) -> ContextGrant:
        """Serve the initial set (``docs/lattice-kernel.md``) within the budget's first part.

        A candidate that cannot be read or does not fit is skipped; the next one is tried.

        Raises:
            ContextError: The initial grant was already served, or the index cannot be read.
        """
        if self._initial_served:
            raise ContextError(
                "the initial grant was already served",
                hint="Ask for more context with a context_request (fault).",
            )
        self._initial_served = True
        try:
            requests = initial_requests(self.ranking, self._imports, self._nodes, self.scope)
        except RepoContextError as exc:
            raise ContextError(f"cannot read the imports of the initial set: {exc}") from exc
        granted: list[ContextPage] = []
        for request in requests:
            if not self._ledger.pages_left(initial=True):
                break
            try:
                page = self._read(request, self._ledger.tokens_left(initial=True))
            except ContextError:
                continue
            fits = page.token_count <= self._ledger.tokens_left(initial=True)
            if fits and self._ledger.holding(page) is None:
                self._ledger.add(page)
                granted.append(page)
        return self._grant(granted, ())

    def restore(self, pages: Sequence[ContextPage], faults: Sequence[FaultRecord]) -> None:
        """Take up a run another process began: its granted pages and served faults.

        The pages count against the budget again and are not granted twice; nothing is read
        (a page whose file changed since is caught by its handle's fingerprint at lowering).

        Raises:
            ContextError: The kernel already granted context.
        """
        if self._initial_served or self._faults:
            raise ContextError("a kernel that already granted context cannot restore a run")
        for page in pages:
            self._ledger.add(page)
        self._faults.extend(faults)
        self._initial_served = True

    def fault(self, requests: Sequence[ContextRequestItem]) -> ContextGrant:
        """Serve one ``context_request`` within the remaining budget and record it.

        Each item is resolved (path hint, symbol) and granted when it is in scope, readable,
        not granted already and fits the pages and tokens left; otherwise it is refused with
        the reason. The fault is counted whatever was granted.

        Raises:
            ContextError: ``requests`` is empty.
            BudgetExhaustedError: The task's context faults are spent (recorded, not served).
        """
        if not requests:
            raise ContextError("a context_request needs at least one item")
        items = tuple(requests)
        if len(self._faults) >= self.task.budget.context_faults:
            raise BudgetExhaustedError(
                f"the task's {self.task.budget.context_faults} context faults are spent",
                hint="Propose a patch with the context already granted.",
            )
        granted: list[ContextPage] = []
        refused: list[str] = []
        for item in items:
            outcome = self._serve(item)
            if isinstance(outcome, Refusal):
                refused.append(f"{describe(item)}: {outcome.why}")
            else:
                granted.append(outcome)
        record = FaultRecord(
            len(self._faults) + 1, items, tuple(p.id for p in granted), tuple(refused)
        )
        self._faults.append(record)
        return self._grant(granted, tuple(refused))

    def verify(self, page: ContextPage) -> None:
        """Check that ``page``'s file is unchanged on disk since the page was granted.

        Raises:
            StalePageError: The file's blob id changed, or the file can no longer be read.
        """
        now = current_fingerprint(self.index.workspace, self.index.repo_id, page.path)
        if now != page.fingerprint:
            state = "is gone or unreadable" if now is None else f"is now {now}"
            raise StalePageError(
                f"{page.path} changed since page {page.id} was granted (it {state})",
                hint="Ask for the file again with a context_request; stale pages are not served.",
            )

    def refresh(self, page_id: str) -> ContextPage:
        """Serve a granted page again, after re-hashing its file.

        Raises:
            ContextError: No page ``page_id`` was granted.
            StalePageError: The file changed since the page was granted.
        """
        page = self._ledger.get(page_id)
        if page is None:
            raise ContextError(
                f"no page {page_id[:300]!r} was granted",
                hint="Use the id of a page this task was granted.",
            )
        self.verify(page)
        return page

    def repo_map(self) -> str:
        """The map of the in-scope files no granted page covers (``docs/lattice-kernel.md``).

        Raises:
            ContextError: The index cannot be read.
        """
        return self.map_view().text

    def map_view(self) -> RepoMapView:
        """The repository map as text and as entries (what :meth:`repo_map` renders).

        Raises:
            ContextError: The index cannot be read.
        """
        try:
            return render_repo_map(
                self.index.workspace,
                self.index.repo_id,
                granted=self._ledger.paths,
                scope=self.scope,
                query=self.task.goal,
            )
        except RepoContextError as exc:
            raise ContextError(f"cannot build the repository map: {exc}") from exc

    def _serve(self, item: ContextRequestItem) -> ContextPage | Refusal:
        if not self._ledger.pages_left():
            return Refusal(f"the page budget ({self.task.budget.pages} pages) is spent")
        try:
            request = resolve_item(
                self.index.workspace,
                self.index.repo_id,
                item,
                nodes=self._nodes,
                ranking=self.ranking,
                scope=self.scope,
            )
        except RepoContextError as exc:
            return Refusal(f"the index cannot be read: {exc}")
        if isinstance(request, Refusal):
            return request
        return self._page_for(request)

    def _page_for(self, request: PageRequest) -> ContextPage | Refusal:
        if request.path not in self.scope:
            return Refusal(f"{request.path} is outside the task's scope")
        left = self._ledger.tokens_left()
        try:
            page = self._read(request, left)
        except ContextError as exc:
            return Refusal(exc.message)
        holder = self._ledger.holding(page)
        if holder is not None:
            return Refusal(f"already granted as {holder}")
        if page.token_count > left:
            return Refusal(f"{page.id} needs {page.token_count} tokens; {left} are left")
        self._ledger.add(page)
        return page

    def _read(self, request: PageRequest, tokens_left: int) -> ContextPage:
        """The page by the size rule; a slice instead of a whole file over ``tokens_left``.

        Raises:
            ContextError: The file cannot be read as a page.
        """
        workspace, repo_id = self.index.workspace, self.index.repo_id
        page = read_context_page(workspace, repo_id, request, whole_limit=self.whole_file_chars)
        over = page.kind == "file" and page.token_count > tokens_left
        if over and len(page.content) > SLICE_CHARS:
            return read_context_page(workspace, repo_id, request, whole_limit=SLICE_CHARS)
        return page

    def _imports(self, path: str) -> list[tuple[str, str]]:
        links = self.index.workspace.related(self.index.repo_id, path).imports
        return [(link.path, link.reason) for link in links]

    def _grant(self, pages: Sequence[ContextPage], refused: tuple[str, ...]) -> ContextGrant:
        view = self.map_view()
        return ContextGrant(
            pages=tuple(pages),
            repo_map=view.text,
            map_entries=view.entries,
            faults_used=len(self._faults),
            tokens_used=self._ledger.tokens,
            refused=refused,
        )
