"""Keyword search over a real indexed repository: terms, ranking, reasons, freshness."""

import subprocess
from pathlib import Path

import pytest

from repocontext.errors import InvalidInputError, NotFoundError
from repocontext.search.terms import split_identifier, unique_terms
from repocontext.settings import Settings
from repocontext.workspace import Workspace

FILES = {
    "app/config_loader.py": (
        "import json\n\n\nclass ConfigLoader:\n    def load_config(self, path):\n"
        "        return json.loads(open(path).read())\n\n\ndef parseHTTPHeaders(raw):\n"
        "    return dict(line.split(':', 1) for line in raw.splitlines())\n"
    ),
    "app/server.py": (
        "from app.config_loader import ConfigLoader\n\n\ndef serve():\n"
        "    # the loader reads the config before serving\n    return ConfigLoader()\n"
    ),
    "web/render.js": "export function renderWidget(node) { return node.innerHTML; }\n",
    "README.md": "# Demo\nHow to load a config file and serve it.\n",
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "ws" / "demo"
    for rel, body in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(body)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


@pytest.fixture
def workspace(tmp_path: Path, repo: Path):
    settings = Settings(
        data_dir=tmp_path / "data", workspace_root=repo.parent, reconcile="off", embedder="off"
    )  # the keyword path alone (tests/search/test_semantic.py covers hybrid)
    with Workspace.open(settings) as opened:
        opened.bootstrap(repo, background=False)
        yield opened


def test_identifiers_split_on_humps_digits_and_underscores() -> None:
    assert split_identifier("parseHTTPResponse2") == ["parse", "http", "response", "2"]
    assert unique_terms("load_config(ConfigLoader)") == [
        "load",
        "config",
        "load_config",
        "loader",
        "configloader",
    ]
    assert unique_terms("a + b") == []


def test_the_defining_file_ranks_first_with_reasons_in_the_fixed_order(workspace) -> None:
    result = workspace.search.search("demo", "ConfigLoader load_config", k=5)
    assert result.mode == "keyword"
    assert result.retrieval_path == "keyword.no_embedder"
    top = result.hits[0]
    assert top.path == "app/config_loader.py"
    assert top.key == "repo/demo/file/app/config_loader.py"
    assert top.reasons == [
        "path-name-match",
        "symbol:app.config_loader.ConfigLoader",  # ties on overlap: the earlier definition
        "symbol:app.config_loader.ConfigLoader.load_config",
        "content-match",
        "chunk:symbol",
    ]
    assert top.lines == (4, 6)
    assert top.entry["language"] == "python"
    assert {h.path for h in result.hits} >= {"app/server.py"}
    assert [h.score for h in result.hits] == sorted((h.score for h in result.hits), reverse=True)


def test_camel_case_queries_match_split_identifiers(workspace) -> None:
    hits = workspace.search.search("demo", "http headers parse", k=3).hits
    assert hits[0].path == "app/config_loader.py"
    assert "symbol:app.config_loader.parseHTTPHeaders" in hits[0].reasons
    widget = workspace.search.search("demo", "render widget", k=3).hits
    assert widget[0].path == "web/render.js"
    assert widget[0].reasons[0] == "path-name-match"


def test_edits_and_deletions_reach_search_through_the_change_feed(workspace, repo) -> None:
    index = workspace.search.keyword_index("demo")
    workspace.search.search("demo", "serve", k=3)
    built = index.seq
    (repo / "app/server.py").write_text("def brandNewEntrypoint():\n    pass\n")
    (repo / "web/render.js").unlink()
    workspace.bootstrap(repo, background=False)
    hits = workspace.search.search("demo", "brand new entrypoint", k=3).hits
    assert hits[0].path == "app/server.py"
    assert index.seq > built
    assert index.count() == len(FILES) - 1
    assert all(h.path != "web/render.js" for h in workspace.search.search("demo", "widget").hits)


def test_a_deleted_index_file_is_rebuilt_from_the_store(workspace, tmp_path) -> None:
    before = [h.path for h in workspace.search.search("demo", "config", k=5).hits]
    workspace.search.close()
    for leftover in (tmp_path / "data" / "search").iterdir():
        leftover.unlink()
    assert [h.path for h in workspace.search.search("demo", "config", k=5).hits] == before


def test_freshness_and_refusals(workspace) -> None:
    result = workspace.search.search("demo", "config", k=2)
    assert result.freshness["indexedAt"] and result.freshness["indexing"] is False
    assert workspace.search.search("demo", "zzzz qqqq", k=2).mode == "empty"
    assert workspace.search.search("demo", "config", scope="memory").hits == []
    with pytest.raises(InvalidInputError):
        workspace.search.search("demo", "   ")
    with pytest.raises(NotFoundError):
        workspace.search.search("nope", "config")
