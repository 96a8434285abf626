"""Query-time file filters over a real store: the hits are the best k of the matching files,
from the keyword index and from the vectors alike."""

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from repocontext.search.embed import EmbeddingSpace
from repocontext.search.filters import FileFilter
from repocontext.search.keyword import KeywordDoc, KeywordIndex
from repocontext.search.request import SearchRequest
from repocontext.search.vectors import VectorPlane
from repocontext.settings import Settings
from repocontext.testing import make_repo
from repocontext.workspace import Workspace

CROWD = 100
"""Python files that outrank the filtered-for ones on the query, by far."""


def crowded_files() -> dict[str, str | bytes]:
    files: dict[str, str | bytes] = {
        f"lib/widget_{i}.py": f"def widget_{i}():\n    return 'widget widget widget {i}'\n"
        for i in range(CROWD)
    }
    files["web/src/panel.js"] = "export function panel() { return 'one widget'; }\n"
    files["web/src/deep/dial.ts"] = "export const dial = (w: string) => 'widget ' + w;\n"
    files["docs/widget.md"] = "A widget.\n"
    return files


@contextmanager
def crowd_workspace(tmp_path: Path, embedder: str) -> Iterator[Workspace]:
    repo = make_repo(tmp_path / "ws" / "crowd", crowded_files())
    settings = Settings(
        data_dir=tmp_path / "data",
        workspace_root=tmp_path / "ws",
        reconcile="off",
        embedder=embedder,
    )
    with Workspace.open(settings) as opened:
        opened.bootstrap(repo, "crowd", background=False)
        opened.wait_embedded("crowd")
        yield opened


@pytest.fixture(params=["off", "static"])
def workspace(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Workspace]:
    """Keyword-only, then hybrid: the filter narrows both sides."""
    with crowd_workspace(tmp_path, request.param) as opened:
        yield opened


def paths(workspace: Workspace, **asked: object) -> list[str]:
    request = SearchRequest.of("crowd", "widget", **asked)  # type: ignore[arg-type]
    return [hit.path for hit in workspace.search(request).hits if hit.path]


def test_a_language_filter_finds_matching_files_far_below_the_unfiltered_top(
    workspace: Workspace,
) -> None:
    unfiltered = paths(workspace, k=100)
    assert "web/src/panel.js" not in unfiltered[:30]  # the crowd comes first

    assert paths(workspace, k=1, languages=["javascript"]) == ["web/src/panel.js"]
    assert set(paths(workspace, k=10, languages=["typescript", "javascript"])) == {
        "web/src/deep/dial.ts",
        "web/src/panel.js",
    }


def test_a_glob_filter_keeps_only_matching_paths_and_combines_with_languages(
    workspace: Workspace,
) -> None:
    assert set(paths(workspace, k=10, globs=["web/**"])) == {
        "web/src/panel.js",
        "web/src/deep/dial.ts",
    }
    assert paths(workspace, k=10, globs=["*.md"]) == ["docs/widget.md"]
    assert paths(workspace, k=10, globs=["web/**"], languages=["typescript"]) == [
        "web/src/deep/dial.ts"
    ]
    assert paths(workspace, k=10, globs=["nowhere/**"]) == []
    crowd = paths(workspace, k=50, globs=["lib/**"], languages=["python"])
    assert len(crowd) == 50 and all(path.startswith("lib/") for path in crowd)


def test_semantic_mode_filters_the_vectors_the_same_way(tmp_path: Path) -> None:
    with crowd_workspace(tmp_path, "static") as workspace:
        found = paths(workspace, k=5, mode="semantic", languages=["javascript"])
        scoped = paths(workspace, k=5, mode="semantic", globs=["web/src/deep/**"])
    assert (found, scoped) == (["web/src/panel.js"], ["web/src/deep/dial.ts"])


@pytest.mark.parametrize(
    "kept_files",
    [
        {"f3.py", "f17.py"},  # few rows: only they are multiplied (or the ANN is skipped)
        {f"f{i}.py" for i in range(0, 40, 3)},  # a third of the rows: masked, through the ANN
        {f"f{i}.py" for i in range(39)},  # nearly all
    ],
)
def test_an_exact_vector_scan_and_the_ann_index_return_the_best_rows_of_kept_paths(
    tmp_path: Path, kept_files: set[str]
) -> None:
    space = EmbeddingSpace("test", "random", 16)
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(400, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    rows = [[f"f{i % 40}.py", "window", 1, 2, None] for i in range(400)]
    files: dict[str, str | None] = {f"f{i}.py": None for i in range(40)}
    keep = frozenset(kept_files).__contains__
    query = vectors[5]
    expected = sorted(
        ((float(vectors[i] @ query), i) for i in range(400) if keep(rows[i][0])), reverse=True
    )[:4]

    for threshold in (10_000, 100):  # exact scan, then with an ANN index
        plane = VectorPlane(tmp_path / f"plane{threshold}", space, ann_threshold=threshold)
        plane.replace(vectors, list(rows), files)
        assert plane.approximate == (threshold == 100)
        hits = plane.search(query, 4, frozenset(kept_files))
        assert [h.path for h in hits] == [rows[i][0] for _, i in expected]
        assert [h.score for h in hits] == pytest.approx([s for s, _ in expected], abs=1e-3)
        assert plane.search(query, 4, frozenset()) == []
        assert len(plane.search(query, 400, frozenset(kept_files))) == 10 * len(kept_files)


def test_a_keyword_index_of_the_layout_before_languages_is_started_afresh(tmp_path: Path) -> None:
    path = tmp_path / "old.fts"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE files (id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL, blob TEXT)")
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute("INSERT INTO meta VALUES ('format', '2'), ('seq', '40')")
    db.commit()
    db.close()

    index = KeywordIndex(path)
    try:
        assert index.seq == 0  # rebuilt from the store at the next search
        doc = KeywordDoc("a.py", None, "a py", "", "widget", language="python")
        index.apply([doc], [], 1)
        python = FileFilter.of(languages=["python"])
        assert python is not None and index.paths_where(python) == {"a.py"}
        index.apply([KeywordDoc("b.py", None, "b py", "", "", language="python")], [], 2)
        assert index.paths_where(python) == {"a.py", "b.py"}  # (not the last answer)
        assert [hit.path for hit in index.search(["widget"], 5, frozenset({"a.py"}))] == ["a.py"]
        assert index.search(["widget"], 5, frozenset()) == []
    finally:
        index.close()
