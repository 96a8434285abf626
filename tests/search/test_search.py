"""Keyword search over a real indexed repository: terms, ranking, reasons, freshness."""

from pathlib import Path

import pytest

from repocontext.errors import BudgetTooSmallError, InvalidInputError, NotFoundError
from repocontext.pack.bundle import Bundle
from repocontext.search.request import SearchRequest
from repocontext.search.terms import split_identifier, unique_terms
from repocontext.settings import Settings
from repocontext.testing import make_repo
from repocontext.wire.retrieval import ContextResultWire
from repocontext.workspace import Workspace


def wire_of(bundle: Bundle) -> dict:
    """The bundle as the context tool sends it."""
    return ContextResultWire.of(bundle).wire()


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
    return make_repo(tmp_path / "ws" / "demo", FILES)


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
    result = workspace.search(SearchRequest.of("demo", "ConfigLoader load_config", k=5))
    assert result.mode == "keyword"
    assert result.retrieval_path == "keyword.no_embedder"
    top = result.hits[0]
    assert top.path == "app/config_loader.py"
    assert top.key == "repo/demo/file/app/config_loader.py"
    assert top.reasons == (
        "path-name-match",
        "symbol:app.config_loader.ConfigLoader",  # ties on overlap: the earlier definition
        "symbol:app.config_loader.ConfigLoader.load_config",
        "content-match",
        "chunk:symbol",
    )
    assert top.lines == (4, 6)
    assert top.entry.kind == "file" and top.entry.language == "python"
    assert {h.path for h in result.hits} >= {"app/server.py"}
    assert [h.score for h in result.hits] == sorted((h.score for h in result.hits), reverse=True)


def test_camel_case_queries_match_split_identifiers(workspace) -> None:
    hits = workspace.search(SearchRequest.of("demo", "http headers parse", k=3)).hits
    assert hits[0].path == "app/config_loader.py"
    assert "symbol:app.config_loader.parseHTTPHeaders" in hits[0].reasons
    widget = workspace.search(SearchRequest.of("demo", "render widget", k=3)).hits
    assert widget[0].path == "web/render.js"
    assert widget[0].reasons[0] == "path-name-match"


def test_edits_and_deletions_reach_search_through_the_change_feed(workspace, repo) -> None:
    index = workspace._search.keyword_index("demo")
    workspace.search(SearchRequest.of("demo", "serve", k=3))
    built = index.seq
    (repo / "app/server.py").write_text("def brandNewEntrypoint():\n    pass\n")
    (repo / "web/render.js").unlink()
    workspace.bootstrap(repo, background=False)
    hits = workspace.search(SearchRequest.of("demo", "brand new entrypoint", k=3)).hits
    assert hits[0].path == "app/server.py"  # explained from its new node, not the one parsed
    assert "symbol:app.server.brandNewEntrypoint" in hits[0].reasons  # for "serve" before
    assert index.seq > built
    assert index.count() == len(FILES) - 1
    assert all(
        h.path != "web/render.js" for h in workspace.search(SearchRequest.of("demo", "widget")).hits
    )


def test_an_index_behind_the_trimmed_change_feed_is_rebuilt_from_the_records(
    workspace, repo
) -> None:
    index = workspace._search.keyword_index("demo")
    workspace.search(SearchRequest.of("demo", "serve", k=3))
    built = index.seq
    (repo / "app/server.py").write_text("def trimmedFeedSurvivor():\n    pass\n")
    workspace.bootstrap(repo, background=False)
    workspace.store.feed_max_events = 0
    assert workspace.store.sweep().trimmed > 0
    assert workspace.store.feed_floor() > built  # the events since the index are gone
    hits = workspace.search(SearchRequest.of("demo", "trimmed feed survivor", k=3)).hits
    assert hits[0].path == "app/server.py"
    assert workspace._search.keyword_index("demo").seq == workspace.store.last_seq()


def test_a_deleted_index_file_is_rebuilt_from_the_store(workspace, tmp_path) -> None:
    before = [h.path for h in workspace.search(SearchRequest.of("demo", "config", k=5)).hits]
    workspace._search.close()
    for leftover in (tmp_path / "data" / "search").iterdir():
        leftover.unlink()
    assert [
        h.path for h in workspace.search(SearchRequest.of("demo", "config", k=5)).hits
    ] == before


def test_freshness_and_refusals(workspace) -> None:
    result = workspace.search(SearchRequest.of("demo", "config", k=2))
    assert result.freshness.indexed_at and result.freshness.indexing is False
    assert workspace.search(SearchRequest.of("demo", "zzzz qqqq", k=2)).mode == "empty"
    assert workspace.search(SearchRequest.of("demo", "config", scope="memory")).hits == ()
    with pytest.raises(InvalidInputError):
        workspace.search(SearchRequest.of("demo", "   "))
    with pytest.raises(NotFoundError):
        workspace.search(SearchRequest.of("nope", "config"))


def test_files_the_top_hits_import_are_lifted_below_them(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {
        "core/alpha.py": "from core import helper\n\n\ndef ledger():\n    return 'ledger ledger'\n",
        "core/beta.py": "def ledger_two():\n    return 'ledger ledger'\n",
        "core/gamma.py": "def ledger_three():\n    return 'ledger ledger'\n",
        "core/helper.py": "def assist():\n    return 'a ledger note'\n" + "# padding line\n" * 40,
        "core/aaa_other.py": "def unrelated():\n    return 'ledger'\n",
        "core/__init__.py": "",
    }
    root = make_repo(tmp_path / "ws" / "graph", files)
    settings = Settings(
        data_dir=tmp_path / "data", workspace_root=root.parent, reconcile="off", embedder="off"
    )
    with Workspace.open(settings) as workspace:
        workspace.bootstrap(root, background=False)
        order = [h.path for h in workspace.search(SearchRequest.of("graph", "ledger", k=6)).hits]
    assert "core/alpha.py" in order[:3]
    assert order.index("core/helper.py") < order.index("core/aaa_other.py")


def test_the_token_encoding_is_selectable_and_recounts_files(tmp_path: Path, repo: Path) -> None:
    import json

    from repocontext.index.files.nodes import load_file_nodes
    from repocontext.pack.bundle import ContextRequest
    from repocontext.tokens import count_tokens

    text = (repo / "app/config_loader.py").read_text()
    for encoding in ("cl100k_base", "o200k_base"):
        settings = Settings(
            data_dir=tmp_path / "enc",
            workspace_root=repo.parent,
            reconcile="off",
            embedder="off",
            token_encoding=encoding,
        )
        with Workspace.open(settings) as workspace:
            workspace.bootstrap(repo, background=False)
            node = load_file_nodes(workspace.store, "demo")["app/config_loader.py"]
            assert (node["tokenCount"], node["tokenEncoding"]) == (
                count_tokens(text, encoding),
                encoding,
            )
            bundle = workspace.context(ContextRequest("demo", "config loader", budget=4000))
            wire = wire_of(bundle)
            sent = json.dumps(wire, separators=(",", ":"), ensure_ascii=False)
            received = count_tokens(sent, encoding) + count_tokens(bundle.text, encoding)
            assert wire["responseTokens"] == received <= 4000
    assert count_tokens(text, "cl100k_base") != count_tokens(text, "o200k_base")


def test_slices_number_lines_as_the_outline_does_across_form_feeds(workspace, repo) -> None:
    from repocontext.pack.bundle import ContextRequest

    fillers = "".join(
        f"def filler_{i}(value):\n    '''Filler {i}.\f'''\n    return value + {i}\n\n\n"
        for i in range(60)
    )  # a form feed (and \u2028) on many lines: str.splitlines would count each as a line
    body = fillers + "def target_function(x):\n    # \u2028 separator\n    return x * 2\n"
    (repo / "app/long_module.py").write_text(body)
    workspace.bootstrap(repo, background=False)
    start = body.split("\n").index("def target_function(x):") + 1
    request = ContextRequest("demo", "target_function", detail="slices", budget=400)
    bundle = workspace.context(request)
    entry = next(e for e in wire_of(bundle)["entries"] if e["path"] == "app/long_module.py")
    unit = next(u for u in entry["units"] if u[2] <= start <= u[3])
    assert (unit[2], unit[3]) == (start, start + 2)
    header = f"app/long_module.py:{start}-{start + 2}  target_function  name-match\n"
    sliced = bundle.text.split(header, 1)[1].split("\n")
    assert sliced[0] == "def target_function(x):" and sliced[2] == "    return x * 2"


def test_reads_replaced_count_only_files_whose_content_was_delivered(workspace) -> None:
    from repocontext.pack.bundle import ContextRequest

    paths = workspace.context(ContextRequest("demo", "config loader", detail="paths"))
    assert wire_of(paths)["entries"] and paths.reads_replaced == 0  # no content: no read replaced
    first = workspace.context(ContextRequest("demo", "config loader serve", detail="slices"))
    delivered = {e["path"]: e for e in wire_of(first)["entries"]}
    assert first.reads_replaced == sum(e["fullReadTokenCount"] for e in delivered.values())
    # The top file's units already seen: the files after it are still credited to themselves.
    top = wire_of(first)["entries"][0]
    seen = frozenset(u[0] for u in top["units"])
    again = workspace.context(
        ContextRequest("demo", "config loader serve", detail="slices", seen=seen)
    )
    rest = wire_of(again)["entries"]
    assert top["path"] not in {e["path"] for e in rest} and rest
    assert again.reads_replaced == sum(e["fullReadTokenCount"] for e in rest)
    assert again.delivered_receipts == tuple(u[0] for e in rest for u in e["units"])


def test_an_auto_retry_budget_fits_the_first_entry_at_the_detail_auto_then_picks(
    workspace,
) -> None:
    from repocontext.pack.bundle import ContextRequest

    for top in (1, 2, 4):
        for budget in (1, 60, 125, 200, 500, 700):
            try:
                bundle = workspace.context(
                    ContextRequest("demo", "config loader", top=top, budget=budget)
                )
            except BudgetTooSmallError as refused:  # answered from the budget it names
                assert refused.smallest > budget
                bundle = workspace.context(
                    ContextRequest("demo", "config loader", top=top, budget=refused.smallest)
                )
            wire = wire_of(bundle)
            if wire["entries"]:
                continue
            retry = wire["retryBudgetTokens"]
            again = wire_of(
                workspace.context(ContextRequest("demo", "config loader", top=top, budget=retry))
            )
            assert again["entries"], (top, budget, retry, again["detail"])
            assert again["responseTokens"] <= again["budgetTokens"] == retry


def test_a_long_reused_listing_is_cut_to_the_budget_not_the_budget_raised(workspace) -> None:
    from repocontext.pack.bundle import ContextRequest

    task = "config loader serve render widget demo"
    first = workspace.context(ContextRequest("demo", task, detail="slices", session="long"))
    assert len(wire_of(first)["entries"]) >= 3
    again = wire_of(
        workspace.context(ContextRequest("demo", task, detail="slices", session="long", budget=150))
    )
    assert again["entries"] == [] and again["budgetTokens"] == 150
    assert again["responseTokens"] <= 150 and again["truncated"]
    assert again["reusedOmitted"] > 0
    assert len(again["reused"]) + again["reusedOmitted"] == len(wire_of(first)["entries"])


def test_a_huge_query_searches_its_first_terms_only(workspace) -> None:
    from repocontext.search.service import MAX_QUERY_TERMS

    letters = "bcdfghjklmnpqrstvwxz"
    noise = " ".join(  # distinct words that occur nowhere (letters only: no term splits)
        "qq" + "".join(letters[(i // 20**d) % 20] for d in range(4)) for i in range(20_000)
    )
    # (A request refuses a query this long; the service still bounds what reaches it.)
    found = workspace._search.search("demo", f"ConfigLoader {noise}", k=3)
    assert found.hits[0].path == "app/config_loader.py"
    late = workspace._search.search("demo", f"{noise} ConfigLoader", k=3)
    assert late.mode == "empty"  # past the first MAX_QUERY_TERMS terms: not searched
    assert MAX_QUERY_TERMS == 256


@pytest.mark.parametrize("session", ["s" * 500, "tab\there", ""])
def test_a_session_id_no_key_can_hold_is_invalid_input(workspace, session) -> None:
    from repocontext.errors import InvalidInputError
    from repocontext.pack.bundle import ContextRequest

    with pytest.raises(InvalidInputError):
        workspace.context(ContextRequest("demo", "config loader", session=session))


def test_an_expired_session_id_used_again_starts_empty(tmp_path: Path, repo: Path) -> None:
    from repocontext.pack.bundle import SESSION_TTL_S, ContextRequest
    from repocontext.testing import FakeClock

    clock = FakeClock()
    settings = Settings(
        data_dir=tmp_path / "clocked", workspace_root=repo.parent, reconcile="off", embedder="off"
    )
    with Workspace.open(settings, clock=clock) as workspace:
        workspace.bootstrap(repo, background=False)
        request = ContextRequest("demo", "config loader", detail="slices", session="s")
        first = wire_of(workspace.context(request))
        assert first["entries"] and not first["reused"]
        assert wire_of(workspace.context(request))["entries"] == []  # all held by the session
        clock.advance(SESSION_TTL_S + 60)
        other = ContextRequest("demo", "render widget", detail="slices", session="s")
        assert wire_of(workspace.context(other))["entries"][0]["path"] == "web/render.js"
        # A new session under the old id: it never received the config loader.
        fresh = wire_of(workspace.context(request))
        assert "app/config_loader.py" in {e["path"] for e in fresh["entries"]}
        assert wire_of(workspace.context(request))["entries"] == []  # and it holds them now


def test_a_keyword_index_that_cannot_grow_is_store_full(workspace, repo) -> None:
    from repocontext.errors import StoreFullError

    index = workspace._search.keyword_index("demo")
    pages = index._db.execute("PRAGMA page_count").fetchone()[0]
    index._db.execute(f"PRAGMA max_page_count = {pages}")  # as a full disk would refuse
    (repo / "app/big.py").write_text(
        "".join(f"def grow_{i}(x):\n    return x + {i}\n" for i in range(2000))
    )
    workspace.bootstrap(repo, background=False)
    with pytest.raises(StoreFullError) as caught:
        workspace.search(SearchRequest.of("demo", "grow"))
    assert caught.value.code == "store.full"
