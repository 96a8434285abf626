"""Retrieval modes over a real store: keyword, semantic and hybrid on request, and what a
search says when no vectors can answer (fallback by default, a coded error when asked)."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from repocontext.errors import VectorsUnavailableError
from repocontext.pack.request import ContextRequest
from repocontext.search.request import SearchRequest
from repocontext.settings import Settings
from repocontext.store import VECTOR_METADATA
from repocontext.store.keys import vec_key
from repocontext.testing import make_repo
from repocontext.workspace import Workspace

FILES = {
    "app/settings_reader.py": (
        "import json\n\n\ndef read_settings(path):\n    '''Read the settings file.'''\n"
        "    with open(path) as handle:\n        return json.load(handle)\n"
    ),
    "app/mailer.py": (
        "import smtplib\n\n\ndef send_email(to, body):\n    server = smtplib.SMTP('localhost')\n"
        "    server.sendmail('me', to, body)\n"
    ),
    "app/geometry.py": "import math\n\n\ndef circle_area(r):\n    return math.pi * r * r\n",
}


def settings_of(tmp_path: Path, embedder: str) -> Settings:
    return Settings(
        data_dir=tmp_path / "data",
        workspace_root=tmp_path / "ws",
        reconcile="off",
        embedder=embedder,
    )


@pytest.fixture
def embedded(tmp_path: Path) -> Iterator[Workspace]:
    """A repository `demo` indexed and embedded with the static embedder."""
    repo = make_repo(tmp_path / "ws" / "demo", FILES)
    with Workspace.open(settings_of(tmp_path, "static")) as workspace:
        workspace.bootstrap(repo, "demo", background=False)
        workspace.wait_embedded("demo")
        yield workspace


def test_keyword_mode_reads_no_vectors_even_when_they_are_ready(embedded: Workspace) -> None:
    result = embedded.search(SearchRequest.of("demo", "send email", mode="keyword"))

    assert (result.mode, result.retrieval_path) == ("keyword", "keyword.requested")
    assert result.hits[0].path == "app/mailer.py"
    assert all("semantic" not in hit.reasons for hit in result.hits)
    assert result.warnings == ()


def test_semantic_mode_ranks_by_the_vectors_alone(embedded: Workspace) -> None:
    result = embedded.search(SearchRequest.of("demo", "send email", k=3, mode="semantic"))

    assert (result.mode, result.retrieval_path) == ("semantic", "semantic.exact")
    assert result.hits and all("semantic" in hit.reasons for hit in result.hits)
    # A query no word of the repository matches still finds files by meaning.
    wordless = embedded.search(SearchRequest.of("demo", "zzqx postage", mode="semantic"))
    keyword = embedded.search(SearchRequest.of("demo", "zzqx postage", mode="keyword"))
    assert wordless.hits and keyword.mode == "empty"


def test_semantic_mode_ranks_memory_entries_by_the_vectors_alone(embedded: Workspace) -> None:
    note = embedded.remember("demo", "ops", title="Outgoing mail goes through the local relay")
    embedded.wait_embedded("demo")  # (a memory write schedules its embedding)
    request = SearchRequest.of("demo", "mail relay", scope="memory", mode="semantic")

    result = embedded.search(request)

    assert result.retrieval_path == "semantic.exact"
    assert [hit.key for hit in result.hits] == [note.key]
    assert result.hits[0].reasons == ("semantic",)  # no word reason: words did not rank it
    hybrid = embedded.search(SearchRequest.of("demo", "mail relay", scope="memory"))
    assert "content-match" in hybrid.hits[0].reasons and "semantic" in hybrid.hits[0].reasons


def test_hybrid_mode_is_the_default_fusion_when_vectors_are_ready(embedded: Workspace) -> None:
    asked = embedded.search(SearchRequest.of("demo", "read settings", mode="hybrid"))
    default = embedded.search(SearchRequest.of("demo", "read settings"))

    assert asked.retrieval_path == default.retrieval_path == "hybrid.exact"
    assert [h.path for h in asked.hits] == [h.path for h in default.hits]


def test_a_context_bundle_is_built_from_the_mode_asked_for(embedded: Workspace) -> None:
    keyword = embedded.context(ContextRequest.of("demo", "send email", mode="keyword"))
    default = embedded.context(ContextRequest.of("demo", "send email"))

    assert (keyword.mode, keyword.retrieval_path) == ("keyword", "keyword.requested")
    assert default.retrieval_path == "hybrid.exact"


@pytest.mark.parametrize("mode", ["semantic", "hybrid"])
def test_asking_for_vectors_without_an_embedder_is_a_coded_error_not_a_keyword_answer(
    tmp_path: Path, mode: str
) -> None:
    repo = make_repo(tmp_path / "ws" / "demo", FILES)
    with Workspace.open(settings_of(tmp_path, "off")) as workspace:
        workspace.bootstrap(repo, "demo", background=False)
        assert (
            workspace.search(SearchRequest.of("demo", "send email")).retrieval_path
            == "keyword.no_embedder"
        )
        with pytest.raises(VectorsUnavailableError) as caught:
            workspace.search(SearchRequest.of("demo", "send email", mode=mode))
        with pytest.raises(VectorsUnavailableError):
            workspace.context(ContextRequest.of("demo", "send email", mode=mode))
    assert caught.value.code == "search.vectors_unavailable"
    assert f"a {mode} search of 'demo' needs vectors" in caught.value.message
    assert "REPOCONTEXT_EMBEDDER=static" in caught.value.hint and "keyword" in caught.value.hint


def test_asking_for_vectors_before_the_first_pass_ends_says_they_are_not_ready(
    embedded: Workspace,
) -> None:
    running = {"status": "running", "space": "static-x", "chunksDone": 1, "chunksTotal": 9}
    embedded.store.put(VECTOR_METADATA, vec_key("demo", "status"), running)

    default = embedded.search(SearchRequest.of("demo", "send email"))
    with pytest.raises(VectorsUnavailableError) as caught:
        embedded.search(SearchRequest.of("demo", "send email", mode="hybrid"))

    assert default.retrieval_path == "keyword.vector_plane_unavailable"
    assert "not ready yet" in caught.value.message
    assert "repocontext status" in caught.value.hint


def test_vectors_of_another_embedder_answer_keyword_only_with_a_warning_naming_both(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "ws" / "demo", FILES)
    with Workspace.open(settings_of(tmp_path, "static")) as workspace:
        workspace.bootstrap(repo, "demo", background=False)
        workspace.wait_embedded("demo")
    with Workspace.open(settings_of(tmp_path, "minilm")) as other:
        result = other.search(SearchRequest.of("demo", "send email"))
        with pytest.raises(VectorsUnavailableError) as caught:
            other.search(SearchRequest.of("demo", "send email", mode="semantic"))
        bundle = other.context(ContextRequest.of("demo", "send email"))
        warnings = other.search_warnings("demo")
        keyword = other.search(SearchRequest.of("demo", "send email", mode="keyword"))

    assert (result.mode, result.retrieval_path) == ("keyword", "keyword.embedder_mismatch")
    assert result.hits[0].path == "app/mailer.py"
    [warning] = result.warnings
    assert "made with the 'static' embedder" in warning and "uses 'minilm'" in warning
    assert "REPOCONTEXT_EMBEDDER=static" in warning
    assert "REPOCONTEXT_EMBEDDER=minilm repocontext index" in warning
    assert "'static' embedder" in caught.value.message and "minilm" in caught.value.message
    assert bundle.retrieval_path == "keyword.embedder_mismatch" and warnings == (warning,)
    assert bundle.warnings == (warning,)  # the bundle says so too
    assert (keyword.retrieval_path, keyword.warnings) == ("keyword.requested", ())
