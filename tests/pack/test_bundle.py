"""The context path does each thing once: hits carry what a bundle renders; budgets are ceilings."""

import subprocess
from pathlib import Path

import pytest

from repocontext.errors import BudgetTooSmallError
from repocontext.pack.bundle import ContextRequest, pack_result
from repocontext.search.request import SearchRequest
from repocontext.settings import Settings
from repocontext.store import SystemClock
from repocontext.workspace import Workspace


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "ws" / "demo"
    (root / "app").mkdir(parents=True)
    (root / "app" / "loader.py").write_text(
        "class ConfigLoader:\n    def load_config(self, path):\n        return path\n"
    )
    (root / "app" / "server.py").write_text(
        "from app.loader import ConfigLoader\n\n\ndef serve():\n    return ConfigLoader()\n"
    )
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


@pytest.fixture
def workspace(tmp_path: Path, repo: Path):
    settings = Settings(
        data_dir=tmp_path / "data", workspace_root=repo.parent, reconcile="off", embedder="off"
    )
    with Workspace.open(settings) as opened:
        opened.bootstrap(repo, background=False)
        yield opened


def test_a_bundle_renders_the_node_and_text_its_hits_were_ranked_from(workspace, repo):
    request = ContextRequest("demo", "config loader", detail="slices")
    result = workspace.search(SearchRequest.of("demo", request.task, k=request.top))
    top = result.hits[0]
    assert top.path == "app/loader.py" and top.node is not None and top.text is not None
    # The file changes and is indexed again: the bundle still renders what search read.
    (repo / "app" / "loader.py").write_text("class ConfigLoader:\n    VERSION = 2\n")
    workspace.bootstrap(repo, background=False)
    bundle = pack_result(workspace.store, SystemClock(), request, result)
    entry = next(e for e in bundle.entries if e.path == "app/loader.py")
    assert entry.content == top.text and "load_config" in entry.content
    assert entry.full_read_token_count == top.node.token_count


def test_a_context_call_without_a_session_writes_nothing(workspace):
    workspace.search(SearchRequest.of("demo", "config loader"))  # the keyword index is at the head
    head = workspace.store.last_seq()
    for detail in ("auto", "slices", "outline", "paths"):
        workspace.context(ContextRequest("demo", "config loader", detail=detail))  # type: ignore[arg-type]
    assert workspace.store.last_seq() == head
    workspace.context(ContextRequest("demo", "config loader", session="s"))
    assert workspace.store.last_seq() > head  # a named session records its receipts


def test_the_keyword_index_catches_up_once_per_store_change(workspace):
    workspace.search(SearchRequest.of("demo", "config loader"))
    index = workspace._search.keyword_index("demo")
    assert index.seq == workspace.store.last_seq()
    assert workspace._search.sync("demo") == 0  # at the head: nothing to apply
    workspace.context(ContextRequest("demo", "config loader", session="s"))  # a store write
    assert index.seq < workspace.store.last_seq()
    workspace.search(SearchRequest.of("demo", "config loader"))
    caught_up = index.seq
    assert caught_up == workspace.store.last_seq()
    workspace.search(SearchRequest.of("demo", "serve"))
    assert index.seq == caught_up and workspace._search.sync("demo") == 0


@pytest.mark.parametrize("detail", ["auto", "paths", "outline", "slices"])
def test_a_budget_below_the_smallest_answer_is_refused_never_exceeded(workspace, detail):
    request = ContextRequest("demo", "config loader", budget=60, detail=detail)
    with pytest.raises(BudgetTooSmallError) as refused:
        workspace.context(request)
    error = refused.value
    assert error.code == "context.budget_too_small" and error.budget == 60
    assert error.smallest > 60 and str(error.smallest) in error.hint
    answered = workspace.context(
        ContextRequest("demo", "config loader", budget=error.smallest, detail=detail)
    )
    assert answered.response_tokens <= answered.budget_tokens == error.smallest
    with pytest.raises(BudgetTooSmallError):
        workspace.context(
            ContextRequest("demo", "config loader", budget=error.smallest - 1, detail=detail)
        )
    for budget in range(error.smallest, error.smallest + 300, 7):
        bundle = workspace.context(ContextRequest("demo", "config loader", budget=budget))
        assert bundle.response_tokens <= bundle.budget_tokens == budget
