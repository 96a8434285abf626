import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from repocontext.errors import (
    DangerousRootError,
    InvalidInputError,
    NoWorkspaceRootError,
    PathNotFoundError,
    PathOutsideWorkspaceError,
    RepoConflictError,
    RootChangedError,
    StoreUnavailableError,
)
from repocontext.index.files.walk import WalkOptions
from repocontext.settings import Settings
from repocontext.store import STRUCTURAL, VECTOR_METADATA, Store
from repocontext.store.keys import file_key, repo_key, vec_key
from repocontext.testing import FakeClock
from repocontext.workspace import Workspace


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "ws" / "alpha").mkdir(parents=True)
    (tmp_path / "ws" / "beta").mkdir()
    return tmp_path / "ws"


@pytest.fixture
def workspace(tmp_path: Path, root: Path) -> Iterator[Workspace]:
    settings = Settings(data_dir=tmp_path / "data", workspace_root=root)
    with Workspace.open(settings, clock=FakeClock(1_800_000_000.0)) as ws:
        yield ws


def _mark_indexed(data_dir: Path, repo_id: str, vectors: int) -> None:
    # Stands in for the indexer and the embedding pass: the records they leave behind.
    with Store.open(data_dir) as store:
        record = store.get(STRUCTURAL, repo_key(repo_id))
        assert record is not None and isinstance(record.value, dict)
        value = {**record.value, "files": 3, "indexedAt": "2027-01-01T00:00:00.000Z"}
        store.put(STRUCTURAL, repo_key(repo_id), value)
        if vectors:
            status = {"status": "completed", "space": "static-m-256", "vectors": vectors}
            store.put(VECTOR_METADATA, vec_key(repo_id, "status"), status)


def test_register_repo_records_root_and_time(workspace: Workspace, root: Path) -> None:
    info = workspace.register_repo(root / "alpha")
    assert info.repo_id == "alpha"
    assert info.root == str((root / "alpha").resolve())
    assert info.registered_at == "2027-01-15T08:00:00.000Z"
    assert (info.files, info.vectors, info.indexed_at) == (0, 0, None)


def test_register_repo_accepts_an_explicit_id(workspace: Workspace, root: Path) -> None:
    assert workspace.register_repo(root / "alpha", "a-1.x_y").repo_id == "a-1.x_y"
    assert [r.repo_id for r in workspace.list_repos()] == ["a-1.x_y"]


@pytest.mark.parametrize("bad", ["../evil", "a/1", ".hidden", "has space", "é", "-x", "r" * 129])
def test_an_id_that_is_not_a_plain_name_is_refused_before_anything_is_written(
    workspace: Workspace, root: Path, bad: str
) -> None:
    with pytest.raises(InvalidInputError) as caught:
        workspace.register_repo(root / "alpha", bad)
    assert caught.value.code == "input.invalid"
    assert "plain name" in caught.value.hint or "128" in caught.value.hint
    assert workspace.list_repos() == []


def test_a_registered_directory_is_refused_under_a_second_id_naming_the_first(
    workspace: Workspace, root: Path
) -> None:
    workspace.register_repo(root / "alpha")
    for other in ("other", "../evil"):
        with pytest.raises((RepoConflictError, InvalidInputError)) as caught:
            workspace.register_repo(root / "alpha", other)
        assert "'alpha'" in caught.value.hint or "plain name" in caught.value.hint
    with pytest.raises(RepoConflictError) as conflict:
        workspace.register_repo(str(root / "beta" / ".." / "alpha"), "other")
    assert conflict.value.code == "repo.conflict" and "'alpha'" in conflict.value.hint
    assert [r.repo_id for r in workspace.list_repos()] == ["alpha"]
    assert workspace.register_repo(root / "alpha", "alpha").repo_id == "alpha"


def test_a_path_error_quotes_only_a_prefix_of_a_long_path(workspace: Workspace) -> None:
    with pytest.raises(InvalidInputError) as caught:
        workspace.register_repo("a" * (1 << 20))
    assert len(caught.value.message) < 300 and "1048576 characters" in caught.value.message


def test_registering_the_same_directory_twice_changes_nothing(
    workspace: Workspace, root: Path
) -> None:
    first = workspace.register_repo(root / "alpha")
    assert workspace.register_repo(root / "alpha") == first


def test_reusing_an_id_for_another_directory_is_a_conflict(
    workspace: Workspace, root: Path
) -> None:
    workspace.register_repo(root / "alpha", "x")
    with pytest.raises(RepoConflictError):
        workspace.register_repo(root / "beta", "x")


def test_paths_outside_the_workspace_root_are_refused(workspace: Workspace, tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    with pytest.raises(PathOutsideWorkspaceError):
        workspace.register_repo(tmp_path / "elsewhere")


def test_a_symlink_leading_out_of_the_workspace_is_refused(
    workspace: Workspace, root: Path, tmp_path: Path
) -> None:
    (tmp_path / "outside").mkdir()
    (root / "link").symlink_to(tmp_path / "outside")
    with pytest.raises(PathOutsideWorkspaceError):
        workspace.register_repo(root / "link")


def test_dot_dot_cannot_escape_the_workspace(workspace: Workspace, root: Path) -> None:
    with pytest.raises(PathOutsideWorkspaceError):
        workspace.register_repo(root / "alpha" / ".." / "..")


def test_filesystem_root_and_home_are_refused(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", workspace_root=Path("/"))
    with Workspace.open(settings) as ws:
        for dangerous in (Path("/"), Path.home()):
            with pytest.raises(DangerousRootError):
                ws.register_repo(dangerous)


def test_a_missing_directory_is_refused(workspace: Workspace, root: Path) -> None:
    with pytest.raises(PathNotFoundError):
        workspace.register_repo(root / "missing")


def test_registration_needs_a_workspace_root(tmp_path: Path) -> None:
    with (
        Workspace.open(Settings(data_dir=tmp_path / "data")) as ws,
        pytest.raises(NoWorkspaceRootError),
    ):
        ws.register_repo(tmp_path)


@pytest.mark.parametrize("bad", ["", ".", "..", " padded ", "tab\there"])
def test_malformed_repo_ids_are_refused(workspace: Workspace, root: Path, bad: str) -> None:
    with pytest.raises(InvalidInputError):
        workspace.register_repo(root / "alpha", bad)


def test_list_repos_is_in_ascending_id_order_and_skips_file_records(
    workspace: Workspace, root: Path, tmp_path: Path
) -> None:
    (root / "alpha" / "two").mkdir()
    workspace.register_repo(root / "beta")
    workspace.register_repo(root / "alpha")
    workspace.register_repo(root / "alpha" / "two", "alpha-2")
    workspace.close()
    with Store.open(tmp_path / "data") as store:
        store.put(STRUCTURAL, file_key("alpha", "src/app.py"), {"size": 1})
    with Workspace.open(workspace.settings) as reopened:
        assert [r.repo_id for r in reopened.list_repos()] == ["alpha", "alpha-2", "beta"]
        assert reopened.get_repo("beta") is not None
        assert reopened.get_repo("gamma") is None


def test_list_repos_reads_past_the_first_page_of_file_records(
    workspace: Workspace, root: Path, tmp_path: Path
) -> None:
    workspace.register_repo(root / "alpha")
    workspace.register_repo(root / "beta")
    workspace.close()
    with Store.open(tmp_path / "data") as store, store.batch() as batch:
        for n in range(1500):
            batch.put(STRUCTURAL, file_key("alpha", f"src/m{n:04}.py"), {"size": n})
    with Workspace.open(workspace.settings) as reopened:
        assert [r.repo_id for r in reopened.list_repos()] == ["alpha", "beta"]


def test_health_with_nothing_registered_is_ready(workspace: Workspace) -> None:
    report = workspace.health()
    assert report.available and report.status == "ok" and report.group == "repocontext"
    assert (report.retrieval_phase, report.retrieval_ready) == ("nothing_registered", True)
    assert report.repository is None


def test_health_is_building_until_the_first_index_pass(workspace: Workspace, root: Path) -> None:
    workspace.register_repo(root / "alpha")
    report = workspace.health("alpha")
    assert (report.retrieval_phase, report.retrieval_ready) == ("building", False)
    assert report.repository is not None
    assert report.repository.verdict == "building"


def test_health_reports_an_unknown_repo_without_raising(workspace: Workspace) -> None:
    repository = workspace.health("nope").repository
    assert repository is not None
    assert repository.verdict == "unknown"
    assert "repocontext_list_repos" in repository.reason


def test_health_of_an_indexed_repo_without_vectors_is_keyword_only(
    tmp_path: Path, root: Path
) -> None:
    settings = Settings(data_dir=tmp_path / "data", workspace_root=root)
    with Workspace.open(settings) as ws:
        ws.register_repo(root / "alpha")
    _mark_indexed(tmp_path / "data", "alpha", 0)
    with Workspace.open(settings) as ws:
        report = ws.health("alpha")
    assert (report.retrieval_phase, report.retrieval_ready) == ("keyword_only", True)
    assert report.repository is not None
    assert report.repository.verdict == "keyword_only"
    assert (report.repository.files, report.repository.vectors_indexed) == (3, 0)


def test_health_serves_once_the_vectors_of_the_repo_are_in_this_data_dir(
    tmp_path: Path, root: Path
) -> None:
    (root / "alpha" / "util.py").write_text(
        "def scale(values):\n    return [v * 2 for v in values]\n"
    )
    settings = Settings(data_dir=tmp_path / "data", workspace_root=root, embedder="static")
    with Workspace.open(settings) as ws:
        ws.bootstrap(root / "alpha", "alpha", background=False)
        ws.wait_embedded("alpha", 120)
    with Workspace.open(settings) as ws:
        report = ws.health("alpha")
    assert (report.retrieval_phase, report.retrieval_ready) == ("serving", True)
    assert report.repository is not None and report.repository.verdict == "serving"
    assert report.repository.vectors_indexed > 0
    # Planes gone from this data dir (a server with a data dir of its own): the status record
    # (written by whichever server embedded) alone does not make this one serve.
    shutil.rmtree(tmp_path / "data" / "vectors")
    with Store.open(tmp_path / "data") as store:
        status = store.get(VECTOR_METADATA, vec_key("alpha", "status"))
    assert status is not None and status.value["status"] == "completed"
    with Workspace.open(settings) as ws:
        assert ws.health("alpha").retrieval_phase == "keyword_only"


def test_stats_count_the_registered_repos(workspace: Workspace, root: Path) -> None:
    workspace.register_repo(root / "alpha")
    assert workspace.stats().records[STRUCTURAL] == 1


def test_a_closed_workspace_raises_store_unavailable(workspace: Workspace) -> None:
    workspace.close()
    with pytest.raises(StoreUnavailableError):
        workspace.health()


def test_the_background_sweeper_runs_and_stops_with_the_workspace(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    workspace = Workspace.open(settings)
    workspace.start_background(sweep_interval_seconds=3600)
    workspace.start_background(sweep_interval_seconds=3600)
    assert workspace.sweep().expired == 0
    workspace.close()
    workspace.close()


def test_a_repo_id_too_long_for_the_keys_is_refused_before_anything_is_written(
    workspace: Workspace, root: Path
) -> None:
    (root / "alpha" / "a.py").write_text("x = 1\n")
    with pytest.raises(InvalidInputError) as caught:
        workspace.bootstrap(root / "alpha", "r" * 129, background=False)
    assert "too long" in caught.value.message and "128" in caught.value.hint
    assert workspace.list_repos() == []
    workspace.bootstrap(root / "alpha", "r" * 128, background=False)
    assert [info.files for info in workspace.list_repos()] == [1]


def test_a_root_swapped_for_a_symlink_after_registration_is_not_walked(
    workspace: Workspace, root: Path, tmp_path: Path
) -> None:
    (root / "alpha" / "a.py").write_text("x = 1\n")
    workspace.bootstrap(root / "alpha", background=False)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("TOKEN = 'abc'\n")
    (root / "alpha" / "a.py").unlink()
    (root / "alpha").rmdir()
    (root / "alpha").symlink_to(outside)
    with pytest.raises(RootChangedError) as caught:
        workspace._index.run("alpha", root / "alpha", WalkOptions())
    assert caught.value.code == "path.root_changed"
    with pytest.raises((RootChangedError, PathOutsideWorkspaceError)):  # what a watcher sends
        workspace.refresh("alpha", [str(root / "alpha" / "secret.py")])
    with pytest.raises(RootChangedError):
        workspace.refresh("alpha", [""])
    with pytest.raises(RootChangedError):
        workspace.changed("alpha")
    assert not workspace.outline("alpha", "secret.py").exists
    assert workspace.outline("alpha", "a.py").exists  # the index is left as it was


def test_a_relative_path_is_relative_to_the_workspace_root(
    workspace: Workspace, root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # not the workspace root
    assert workspace.register_repo("alpha").root == str((root / "alpha").resolve())
    for blank in ("", "  "):
        with pytest.raises(InvalidInputError):
            workspace.register_repo(blank)
