"""Semantic retrieval with the real packaged embedders: chunks, planes, hybrid, fail-closed."""

from pathlib import Path

import numpy as np
import pytest

from repocontext.index.files.nodes import node_of
from repocontext.search.embed import EmbeddingSpace, chunks_of, load_embedder
from repocontext.search.request import SearchRequest
from repocontext.search.vectors import VectorPlane
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
    "notes.txt": "\n".join(f"line {i} of prose" for i in range(100)) + "\n",
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "ws" / "demo", FILES)


def open_workspace(tmp_path: Path, repo: Path, embedder: str = "static") -> Workspace:
    settings = Settings(
        data_dir=tmp_path / "data", workspace_root=repo.parent, reconcile="off", embedder=embedder
    )
    return Workspace.open(settings)


def test_chunks_are_symbols_plus_windows_over_uncovered_lines() -> None:
    node = node_of(
        {
            "path": "m.py",
            "symbols": [
                {
                    "kind": "function",
                    "name": "f",
                    "fullyQualifiedName": "m.f",
                    "signature": "",
                    "startLine": 3,
                    "endLine": 4,
                    "children": [],
                }
            ],
        }
    )
    text = "import os\n\ndef f():\n    return 1\n" + "x = 1\n" * 45
    chunks = chunks_of(node, text)
    assert [(c.kind, c.start_line, c.end_line, c.symbol) for c in chunks] == [
        ("symbol", 3, 4, "m.f"),
        ("window", 1, 2, None),
        ("window", 5, 44, None),
        ("window", 45, 49, None),
    ]
    assert chunks[0].text.startswith("m.py m.f\ndef f():")


def test_a_plane_persists_reloads_and_scans_exactly_or_approximately(tmp_path: Path) -> None:
    space = EmbeddingSpace("test", "random", 16)
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(300, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    rows = [[f"f{i}.py", "window", 1, 2, None] for i in range(300)]
    exact = VectorPlane(tmp_path / "exact", space)
    exact.replace(vectors, rows, {f"f{i}.py": "b" for i in range(300)})
    assert not exact.approximate
    reopened = VectorPlane(tmp_path / "exact", space)
    assert reopened.size == 300 and reopened.search(vectors[7], 1)[0].path == "f7.py"
    ann = VectorPlane(tmp_path / "ann", space, ann_threshold=100)
    ann.replace(vectors, rows, {})
    again = VectorPlane(tmp_path / "ann", space, ann_threshold=100)
    assert again.approximate
    assert again.search(vectors[42], 3)[0].path == "f42.py"
    (tmp_path / "exact" / "vectors.npy").write_bytes(b"broken")
    assert VectorPlane(tmp_path / "exact", space).size == 0  # discarded, rebuilt by a pass


def test_hybrid_search_finds_meaning_and_says_how(tmp_path: Path, repo: Path) -> None:
    with open_workspace(tmp_path, repo) as workspace:
        workspace.bootstrap(repo, background=False)
        workspace.wait_embedded("demo")
        result = workspace.search(
            SearchRequest.of("demo", "load configuration from a json file", k=3)
        )
        assert result.mode == "hybrid" and result.retrieval_path == "hybrid.exact"
        assert result.hits[0].path == "app/settings_reader.py"
        assert "semantic" in result.hits[0].reasons
        vocabulary = ["path-name-match", "symbol", "content-match", "semantic", "chunk"]
        for hit in result.hits:  # the fixed order holds with the vector side on too
            ranks = [vocabulary.index(r.split(":")[0]) for r in hit.reasons]
            assert ranks == sorted(ranks), hit.reasons
        meaning = workspace.search(SearchRequest.of("demo", "deliver a message to someone", k=2))
        assert meaning.hits[0].path == "app/mailer.py"  # no shared word: only meaning matches
        assert meaning.mode in ("semantic", "hybrid")
        status = workspace.index_status("demo")
        assert status.status == "completed" and status.counters["vectors"] > 0
        assert workspace.health("demo").repository.verdict == "serving"
        assert workspace.health().retrieval_phase == "serving"


def test_only_changed_files_are_embedded_again(tmp_path: Path, repo: Path) -> None:
    with open_workspace(tmp_path, repo) as workspace:
        workspace.bootstrap(repo, background=False)
        workspace.wait_embedded("demo")
        (repo / "app/geometry.py").write_text("def square_area(s):\n    return s * s\n")
        workspace.refresh("demo", ["app/geometry.py"])
        workspace.wait_embedded("demo")
        report = workspace.embed("demo")
        assert report is not None and report.files_embedded == 0  # already taken in
        (repo / "app/mailer.py").unlink()
        workspace.refresh("demo", ["app/mailer.py"])
        workspace.wait_embedded("demo")
        paths = {h.path for h in workspace.search(SearchRequest.of("demo", "send email", k=5)).hits}
        assert "app/mailer.py" not in paths


def test_search_fails_closed_without_an_embedder_or_while_vectors_build(
    tmp_path: Path, repo: Path
) -> None:
    with open_workspace(tmp_path, repo, embedder="off") as workspace:
        workspace.bootstrap(repo, background=False)
        result = workspace.search(SearchRequest.of("demo", "settings", k=2))
        assert (result.mode, result.retrieval_path) == ("keyword", "keyword.no_embedder")
        assert workspace.health("demo").repository.verdict == "keyword_only"
    with open_workspace(tmp_path, repo) as workspace:
        workspace.store.put(
            VECTOR_METADATA,
            vec_key("demo", "status"),
            {"status": "running", "space": "static-x", "chunksDone": 3, "chunksTotal": 9},
        )
        result = workspace.search(SearchRequest.of("demo", "settings", k=2))
        assert result.retrieval_path == "keyword.vector_plane_unavailable"
        status = workspace.index_status("demo")
        assert (status.status, status.phase, status.counters["chunks"]) == (
            "running",
            "embedding",
            3,
        )


def test_the_minilm_backend_embeds_with_the_packaged_model(tmp_path: Path, repo: Path) -> None:
    embedder = load_embedder("minilm")
    assert embedder is not None and embedder.space.dimension == 384
    with open_workspace(tmp_path, repo, embedder="minilm") as workspace:
        workspace.bootstrap(repo, background=False)
        workspace.wait_embedded("demo")
        result = workspace.search(SearchRequest.of("demo", "compute the area of a circle", k=2))
        assert result.retrieval_path == "hybrid.exact"
        assert result.hits[0].path == "app/geometry.py"


def test_a_memory_write_rewrites_only_the_memory_plane(tmp_path: Path, repo: Path) -> None:
    with open_workspace(tmp_path, repo) as workspace:
        workspace.bootstrap(repo, background=False)
        workspace.wait_embedded("demo")
        planes = tmp_path / "data" / "vectors" / "repo_demo"
        file_plane = next(p for p in planes.iterdir() if "." not in p.name)
        before = (file_plane / "vectors.npy").stat().st_mtime_ns
        vectors_before = workspace._semantic.ready_vectors("demo")

        key = workspace.remember("demo", "mail", title="outgoing email needs retries")
        workspace.wait_embedded("demo")
        assert (file_plane / "vectors.npy").stat().st_mtime_ns == before
        assert workspace._semantic.ready_vectors("demo") == vectors_before + 1
        hits = workspace._semantic.search("demo", "retry sending mail", 20) or []
        assert any(hit.path.endswith(key.key) for hit in hits)


def test_search_stays_hybrid_while_a_pass_rewrites_the_planes(tmp_path: Path, repo: Path) -> None:
    with open_workspace(tmp_path, repo) as workspace:
        workspace.bootstrap(repo, background=False)
        workspace.wait_embedded("demo")
    (repo / "app" / "geometry.py").write_text("def square_area(side):\n    return side**2\n")
    with open_workspace(tmp_path, repo, embedder="off") as workspace:
        workspace.bootstrap(repo, background=False)  # indexed, not embedded yet
    with open_workspace(tmp_path, repo) as workspace:
        seen: list[tuple[str, str]] = []

        def during(done: int, total: int) -> None:
            result = workspace.search(SearchRequest.of("demo", "compute the area of a shape"))
            seen.append((workspace._semantic.status("demo").status, result.mode))

        report = workspace.embed("demo", on_progress=during)
        assert report is not None and report.files_embedded == 1
        assert seen and all(state == ("running", "hybrid") for state in seen), seen
        assert workspace._semantic.status("demo").status == "completed"
