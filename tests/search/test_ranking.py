"""The code ranking on small real repositories: query plans, file priors, named definitions."""

from pathlib import Path

import pytest

from repocontext.search.ranking import DEFAULT_RANKING, Ranking, fuse, plan_query
from repocontext.search.request import SearchRequest
from repocontext.search.vectors import ChunkHit
from repocontext.settings import Settings
from repocontext.testing import make_repo
from repocontext.workspace import Workspace


def ranked(tmp_path: Path, files: dict[str, str | bytes], query: str, k: int = 10) -> list[str]:
    """The paths a keyword search of a fresh repository made of ``files`` returns, in order."""
    root = make_repo(tmp_path / "ws" / "demo", files)
    settings = Settings(
        data_dir=tmp_path / "data", workspace_root=root.parent, reconcile="off", embedder="off"
    )
    with Workspace.open(settings) as workspace:
        workspace.bootstrap(root, background=False)
        hits = workspace.search(SearchRequest.of("demo", query, k)).hits
    return [hit.path for hit in hits if hit.path is not None]


def scored(tmp_path: Path, files: dict[str, str | bytes], *queries: str) -> list[dict[str, float]]:
    """Per query, the score of each hit of a keyword search of a fresh repository."""
    root = make_repo(tmp_path / "ws" / "demo", files)
    settings = Settings(
        data_dir=tmp_path / "data", workspace_root=root.parent, reconcile="off", embedder="off"
    )
    with Workspace.open(settings) as workspace:
        workspace.bootstrap(root, background=False)
        return [
            {h.path: h.score for h in workspace.search(SearchRequest.of("demo", query)).hits}
            for query in queries
        ]


SOURCE = (
    "def render_template(name, context):\n"
    "    '''Render a template with the given context.'''\n"
    "    return name.format(**context)\n"
)


def test_a_changelog_that_repeats_the_query_does_not_outrank_the_source_that_defines_it(
    tmp_path: Path,
) -> None:
    changelog = "\n".join(
        f"- render_template: fix rendering a template with an empty context ({i})"
        for i in range(30)
    )
    order = ranked(
        tmp_path,
        {"app/templating.py": SOURCE, "CHANGES.rst": changelog + "\n", "app/other.py": "x = 1\n"},
        "Fix render_template with an empty context",
    )
    assert order[0] == "app/templating.py"
    assert "CHANGES.rst" in order  # still found, below the code


def test_a_test_file_that_repeats_the_query_ranks_below_the_source_it_tests(
    tmp_path: Path,
) -> None:
    test_file = "from app.templating import render_template\n\n\n" + "".join(
        f"def test_render_template_empty_context_{i}():\n"
        f"    assert render_template('x', {{}}) == 'x'  # empty context\n\n\n"
        for i in range(12)
    )
    files = {"app/templating.py": SOURCE, "tests/test_templating.py": test_file}
    order = ranked(tmp_path, files, "render_template fails on an empty context")
    assert order == ["app/templating.py", "tests/test_templating.py"]


def test_tests_keep_their_full_score_when_the_query_asks_for_tests(tmp_path: Path) -> None:
    test_file = "from app.templating import render_template\n\n\n" + "".join(
        f"def test_render_template_empty_context_{i}():\n"
        f"    assert render_template('x', {{}}) == 'x'  # empty context\n\n\n"
        for i in range(12)
    )
    scores = scored(
        tmp_path,
        {"app/templating.py": SOURCE, "tests/test_templating.py": test_file},
        "render_template empty context",
        "render_template empty context testing",
    )
    # ("testing" occurs in neither file: it only says that tests are what is looked for)
    assert scores[1]["app/templating.py"] == scores[0]["app/templating.py"]
    assert scores[1]["tests/test_templating.py"] == pytest.approx(
        scores[0]["tests/test_templating.py"] / DEFAULT_RANKING.test_factor, rel=1e-3
    )


def test_example_code_that_repeats_the_query_ranks_below_the_source_unless_examples_are_asked(
    tmp_path: Path,
) -> None:
    example = "from app.templating import render_template\n\n" + "".join(
        f"print(render_template('page{i}', {{}}))  # empty context\n" for i in range(20)
    )
    files = {
        "app/templating.py": SOURCE,
        "examples/render_template_demo.py": example,
        "docs/conf.py": "# render_template empty context " * 20 + "\n",
    }
    scores = scored(
        tmp_path, files, "render_template empty context", "render_template empty context example"
    )
    assert max(scores[0], key=lambda p: scores[0][p]) == "app/templating.py"
    assert scores[0]["examples/render_template_demo.py"] < scores[0]["app/templating.py"]
    # ("example" occurs in no file: it only says that the examples are what is looked for)
    assert scores[1]["examples/render_template_demo.py"] == pytest.approx(
        scores[0]["examples/render_template_demo.py"] / DEFAULT_RANKING.docs_factor, rel=1e-3
    )
    assert scores[1]["docs/conf.py"] == pytest.approx(
        scores[0]["docs/conf.py"] / DEFAULT_RANKING.docs_factor, rel=1e-3
    )


def test_trailers_links_and_issue_numbers_of_a_commit_message_are_not_searched(
    tmp_path: Path,
) -> None:
    message = (
        "Fix `url_for` with a trailing slash (#4521) See https://example.org/issues/4521 "
        "Co-authored-by: Jane Keller <jane.keller@example.org> Signed-off-by: Bo Lund <bo@x.io>"
    )
    plan = plan_query(message)
    assert {"url_for", "url", "for", "trailing", "slash"} <= set(plan.terms)
    assert not {"4521", "https", "example", "jane", "keller", "bo", "lund"} & set(plan.terms)
    order = ranked(
        tmp_path,
        {
            "app/routing.py": "def url_for(endpoint):\n    return '/' + endpoint + '/'\n",
            "AUTHORS.py": "NAMES = ['Jane Keller', 'Bo Lund', 'example.org 4521']\n",
        },
        message,
    )
    assert order == ["app/routing.py"]


def test_identifier_like_words_of_a_message_weigh_more_than_its_prose() -> None:
    plan = plan_query("Make `SessionInterface.open_session` honour the cookie domain")
    weighted = list(plan.weighted)
    assert weighted.count("open_session") > weighted.count("cookie") == 1
    assert {"open_session", "sessioninterface"} <= plan.identifiers
    plain = plan_query("open_session honour the cookie", Ranking(identifier_weight=1))
    assert list(plain.weighted) == list(plain.terms)


def test_the_file_defining_the_function_a_long_message_names_ranks_above_its_mentions(
    tmp_path: Path,
) -> None:
    mentions = (
        "from app.sessions import open_session\n\n\n"
        "def session_cookie_domain(request):\n"
        "    # the cookie domain and the session cookie path decide the cookie\n"
        "    session = open_session(request)\n"
        "    return session.cookie, session.domain, request.cookie, request.domain\n"
    )
    state = "".join(f"    state_{i} = request.state.get({i})\n" for i in range(30))
    files = {
        "app/sessions.py": f"def open_session(request):\n{state}    return request.state\n",
        "app/handlers.py": mentions,
        "app/views.py": mentions.replace("session_cookie_domain", "view_cookie_domain"),
    }
    message = (
        "open_session ignored the cookie domain. When the session cookie has a domain, "
        "the cookie must be read for that domain and the request cookie kept as it is."
    )
    assert ranked(tmp_path, files, message)[0] == "app/sessions.py"


def test_the_word_test_alone_does_not_lift_tests_above_the_source(tmp_path: Path) -> None:
    client = (
        "class TestClient:\n"
        "    '''The test client: sends requests to the app without a server.'''\n\n"
        "    def open(self, environ):\n        return environ\n"
    )
    test_file = "from app.testing import TestClient\n\n\n" + "".join(
        f"def test_client_passes_environ_{i}():\n"
        f"    assert TestClient().open({{'environ': 1}})  # test client environ\n\n\n"
        for i in range(12)
    )
    files = {"app/testing.py": client, "tests/test_client.py": test_file}
    order = ranked(tmp_path, files, "support passing environ to the test client")
    assert order == ["app/testing.py", "tests/test_client.py"]


def test_a_file_named_by_run_together_query_words_outranks_files_that_mention_them(
    tmp_path: Path,
) -> None:
    mentions = (
        "def join_filter(node):\n"
        + "    # an async filter: join the values\n" * 3
        + "    return node\n"
    )
    files = {
        "pkg/asyncfilters.py": "async def do_join(values):\n    return ''.join(values)\n",
        "pkg/runtime.py": mentions,
        "pkg/compiler.py": mentions.replace("run", "visit"),
    }
    assert ranked(tmp_path, files, "Make the join filter work with async")[0] == (
        "pkg/asyncfilters.py"
    )


def test_the_first_hits_do_not_depend_on_how_many_were_asked_for(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {
        f"app/cache/flush_{i:02}.py": "# flush_cache flush the cache: flush_cache\nX = 1\n"
        for i in range(20)
    }
    body = "".join(f"    step_{i} = {i}\n" for i in range(60))
    files["app/store.py"] = f"def flush_cache():\n{body}    return None\n"
    root = make_repo(tmp_path / "ws" / "demo", files)
    settings = Settings(
        data_dir=tmp_path / "data", workspace_root=root.parent, reconcile="off", embedder="off"
    )
    with Workspace.open(settings) as workspace:
        workspace.bootstrap(root, background=False)
        few, many = (
            [h.path for h in workspace.search(SearchRequest.of("demo", "flush_cache", k)).hits]
            for k in (3, 30)
        )
    assert few[0] == many[0] == "app/store.py"  # the definition, found with any k
    assert few == many[:3]


def test_fusion_adds_the_scaled_similarity_to_the_normalized_keyword_score() -> None:
    def chunk(path: str, score: float) -> ChunkHit:
        return ChunkHit(path, "symbol", 1, 2, None, score)

    keyword = {"a.py": 10.0, "b.py": 9.0}
    chunks = [chunk("b.py", 0.8), chunk("c.py", 0.5), chunk("a.py", 0.2), chunk("b.py", 0.7)]
    fused = fuse(keyword, chunks, Ranking(fusion="score", semantic_weight=0.6))
    assert fused == pytest.approx({"a.py": 1.0, "b.py": 0.9 + 0.6, "c.py": 0.6 * 0.5})
    ranks = fuse(keyword, chunks, Ranking(fusion="rrf", semantic_weight=0.5, rrf_k=20))
    assert ranks["a.py"] == pytest.approx(1 / 21 + 0.5 / 23)
