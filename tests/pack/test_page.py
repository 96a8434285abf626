"""Workspace.page: files read from disk, with the git blob id, exact tokens and freshness."""

import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repocontext.errors import RepoContextError
from repocontext.index.files.walk import WalkOptions
from repocontext.pack.page import Page, split_lines
from repocontext.settings import Settings
from repocontext.store import STRUCTURAL
from repocontext.store.keys import file_key, repo_key
from repocontext.tokens import count_tokens
from repocontext.workspace import Workspace

FILES: dict[str, bytes] = {
    "core.py": b"def compute(x):\n    return x * 2\n\n\nclass Engine:\n    pass\n",
    "crlf.txt": b"first\r\nsecond\r\nthird\r\n",
    "tail.py": b"a = 1\nb = 2",
    "empty.py": b"",
    "lone_cr.txt": b"one\rstill one\ntwo\n",
    "unicode.md": "caf\u00e9 \u2014 \u65e5\u672c\n\ufeffzero\u2028width\n".encode(),
}


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=True)
    return done.stdout.decode().strip()


def make_repo(root: Path) -> Path:
    root.mkdir(parents=True)
    for name, data in FILES.items():
        (root / name).write_bytes(data)
    (root / "pkg").mkdir()
    (root / "pkg" / "util.py").write_text("".join(f"value_{i} = {i}\n" for i in range(200)))
    (root / ".gitignore").write_text("secret.env\nbuild/\n")
    (root / "secret.env").write_text("TOKEN=hunter2\n")
    (root / "build").mkdir()
    (root / "build" / "out.py").write_text("generated = True\n")
    (root / "vendor.py").write_text("vendored = True\n")
    (root / "image.bin").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    (root / "latin1.txt").write_bytes(b"ok\nna\xefve\n")
    git(root, "init", "-q")
    return root


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[Workspace]:
    """A workspace with the git repository `proj` indexed (vendor.py excluded by a glob)."""
    repo = make_repo(tmp_path / "ws" / "proj")
    settings = Settings(data_dir=tmp_path / "data", workspace_root=tmp_path / "ws", embedder="off")
    with Workspace.open(settings) as opened:
        options = WalkOptions(exclude_globs=("vendor.py",), exclude_binary=False)
        opened.bootstrap(repo, "proj", options, background=False)
        yield opened


def root_of(workspace: Workspace) -> Path:
    info = workspace.get_repo("proj")
    assert info is not None
    return Path(info.root)


def refusal(workspace: Workspace, path: str, **kwargs: object) -> RepoContextError:
    with pytest.raises(RepoContextError) as caught:
        workspace.page("proj", path, **kwargs)  # type: ignore[arg-type]  # (test kwargs)
    return caught.value


def stored_blob(workspace: Workspace, path: str) -> object:
    record = workspace.store.get(STRUCTURAL, file_key("proj", path))
    assert record is not None and isinstance(record.value, dict)
    return record.value["blobId"]


@pytest.mark.parametrize("name", sorted(FILES))
def test_a_whole_page_is_the_file_with_the_blob_id_git_prints(workspace, name):
    page = workspace.page("proj", name)
    assert isinstance(page, Page)
    assert page.text.encode() == FILES[name]
    assert page.blob_id == git(root_of(workspace), "hash-object", name)
    assert page.path == name
    assert page.start_line == 1
    assert page.end_line == len(split_lines(page.text))
    assert page.continuation is None
    assert page.fresh


def test_lines_end_only_at_newlines_and_a_missing_last_newline_still_makes_a_line(workspace):
    assert workspace.page("proj", "crlf.txt").end_line == 3
    assert workspace.page("proj", "crlf.txt", (2, 2)).text == "second\r\n"
    assert workspace.page("proj", "lone_cr.txt", (1, 1)).text == "one\rstill one\n"
    assert workspace.page("proj", "tail.py", (2, 2)).text == "b = 2"
    empty = workspace.page("proj", "empty.py")
    assert (empty.start_line, empty.end_line, empty.text, empty.token_count) == (1, 0, "", 0)


def test_the_token_count_is_the_shared_counter_in_the_configured_encoding(tmp_path):
    repo = make_repo(tmp_path / "ws" / "proj")
    settings = Settings(
        data_dir=tmp_path / "data",
        workspace_root=tmp_path / "ws",
        embedder="off",
        token_encoding="cl100k_base",
    )
    with Workspace.open(settings) as workspace:
        workspace.bootstrap(repo, "proj", background=False)
        page = workspace.page("proj", "unicode.md")
    assert page.token_count == count_tokens(page.text, "cl100k_base")
    assert page.token_count != count_tokens(page.text, "o200k_base")


def test_a_line_range_is_exactly_those_lines_and_ranges_concatenate_to_the_file(workspace):
    whole = (root_of(workspace) / "pkg" / "util.py").read_text()
    page = workspace.page("proj", "pkg/util.py", (3, 4))
    assert page.text == "value_2 = 2\nvalue_3 = 3\n"
    assert (page.start_line, page.end_line) == (3, 4)
    assert page.token_count == count_tokens(page.text)
    assert page.blob_id == git(root_of(workspace), "hash-object", "pkg/util.py")  # whole file
    parts = [workspace.page("proj", "pkg/util.py", (a, a + 49)).text for a in (1, 51, 101, 151)]
    assert "".join(parts) == whole


def test_an_end_past_the_last_line_is_clamped_and_none_reads_to_the_end(workspace):
    clamped = workspace.page("proj", "core.py", (5, 999))
    assert (clamped.start_line, clamped.end_line) == (5, 6)
    assert clamped.text == "class Engine:\n    pass\n"
    assert workspace.page("proj", "core.py", (5, None)) == clamped


@pytest.mark.parametrize("lines", [(0, 2), (-1, 3), (4, 3), (7, 9), (100, None)])
def test_a_range_that_names_no_lines_of_the_file_is_refused_naming_it(workspace, lines):
    error = refusal(workspace, "core.py", lines=lines)
    assert error.code == "input.invalid"
    assert f"lines {lines[0]}-" in error.message


def test_an_absolute_path_under_the_root_names_the_same_file(workspace):
    absolute = str(root_of(workspace) / "core.py")
    assert workspace.page("proj", absolute) == workspace.page("proj", "./core.py")


@pytest.mark.parametrize("path", ["../outside.py", "pkg/../../outside.py", "/etc/hostname"])
def test_a_path_leading_out_of_the_repository_is_refused(workspace, path):
    (root_of(workspace).parent / "outside.py").write_text("x = 1\n")
    assert refusal(workspace, path).code == "path.outside_workspace"


def test_symlinks_out_of_the_root_are_refused_and_one_inside_is_read(workspace, tmp_path):
    root = root_of(workspace)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "stolen.py").write_text("secret = 1\n")
    os.symlink(tmp_path / "elsewhere" / "stolen.py", root / "link_out.py")
    os.symlink(tmp_path / "elsewhere", root / "dir_out")
    os.symlink(root / "core.py", root / "link_in.py")
    assert refusal(workspace, "link_out.py").code == "path.outside_workspace"
    assert refusal(workspace, "dir_out/stolen.py").code == "path.outside_workspace"
    assert workspace.page("proj", "link_in.py").text.encode() == FILES["core.py"]


@pytest.mark.parametrize("path", ["secret.env", "build/out.py", "vendor.py", ".git/config"])
def test_a_file_the_repository_rules_leave_out_is_refused(workspace, path):
    error = refusal(workspace, path)
    assert error.code == "path.outside_workspace"
    assert "TOKEN" not in error.message + error.hint


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("missing.py", "path.not_found"),
        ("pkg", "input.invalid"),
        ("image.bin", "input.invalid"),
        ("latin1.txt", "input.invalid"),
        ("", "input.invalid"),
        ("a\x00b.py", "input.invalid"),
        ("x" * 5000, "input.invalid"),
    ],
)
def test_what_is_no_readable_text_file_is_refused_with_its_code(workspace, path, code):
    error = refusal(workspace, path)
    assert error.code == code
    assert len(error.message) < 400


def test_a_file_that_is_not_utf8_is_refused_naming_its_first_bad_line(workspace):
    assert "line 2" in refusal(workspace, "latin1.txt").message


def test_an_unknown_repository_is_refused(workspace):
    with pytest.raises(RepoContextError) as caught:
        workspace.page("nope", "core.py")
    assert caught.value.code == "repo.not_found"


def test_a_file_changed_after_indexing_is_reindexed_before_its_page_is_returned(workspace):
    root = root_of(workspace)
    before = stored_blob(workspace, "core.py")
    (root / "core.py").write_text("def compute(x):\n    return x * 3\n")
    page = workspace.page("proj", "core.py")
    assert page.blob_id != before
    assert page.blob_id == git(root, "hash-object", "core.py")
    assert page.fresh
    assert stored_blob(workspace, "core.py") == page.blob_id
    assert workspace._index.content("proj", "core.py") == page.text


def test_a_new_file_is_indexed_when_it_is_first_paged(workspace):
    (root_of(workspace) / "fresh_module.py").write_text("def brand_new():\n    pass\n")
    page = workspace.page("proj", "fresh_module.py")
    assert page.fresh
    assert stored_blob(workspace, "fresh_module.py") == page.blob_id
    assert workspace.outline("proj", "fresh_module.py").exists


def test_a_read_only_store_serves_a_stale_file_unchanged_and_says_it_is_not_fresh(workspace):
    root = root_of(workspace)
    before = stored_blob(workspace, "core.py")
    (root / "core.py").write_text("changed = True\n")
    workspace.close()  # (LMDB: one open environment per process)
    with Workspace.open(workspace.settings, read_only=True) as reader:
        stale = reader.page("proj", "core.py")
        unchanged = reader.page("proj", "tail.py")
        assert stored_blob(reader, "core.py") == before
    assert stale.text == "changed = True\n"
    assert stale.blob_id == git(root, "hash-object", "core.py")
    assert not stale.fresh
    assert unchanged.fresh


def test_a_budget_cuts_at_whole_lines_and_the_continuation_reads_on(workspace):
    whole = workspace.page("proj", "pkg/util.py")
    pages: list[Page] = []
    start: int | None = 1
    while start is not None:
        page = workspace.page("proj", "pkg/util.py", (start, None), budget_tokens=100)
        assert page.token_count <= 100
        assert page.token_count == count_tokens(page.text)
        assert page.text.endswith("\n")
        if page.continuation is not None:
            assert page.continuation == page.end_line + 1
        pages.append(page)
        start = page.continuation
    assert len(pages) > 5
    assert "".join(p.text for p in pages) == whole.text
    assert pages[-1].end_line == whole.end_line
    assert {p.blob_id for p in pages} == {whole.blob_id}


def test_a_budget_that_holds_the_whole_range_does_not_cut_it(workspace):
    page = workspace.page("proj", "core.py", budget_tokens=10_000)
    assert page.continuation is None
    assert page.text.encode() == FILES["core.py"]


def test_a_first_line_over_the_budget_is_refused_naming_the_budget_it_needs(workspace):
    needed = count_tokens("def compute(x):\n")
    error = refusal(workspace, "core.py", budget_tokens=needed - 1)
    assert error.code == "input.invalid"
    assert f"at least {needed} tokens" in error.hint
    assert workspace.page("proj", "core.py", budget_tokens=needed).end_line == 1


def test_a_budget_below_one_token_is_refused(workspace):
    assert refusal(workspace, "core.py", budget_tokens=0).code == "input.invalid"


@given(st.text(alphabet=st.sampled_from(["a", "\u00e9", " ", "\n", "\r", "\x0c", "\u2028"])))
def test_split_lines_round_trips_and_splits_only_after_newlines(text):
    lines = split_lines(text)
    assert "".join(lines) == text
    assert all(line.count("\n") == 1 and line.endswith("\n") for line in lines[:-1])
    assert not lines or lines[-1].count("\n") == (1 if text.endswith("\n") else 0)


@pytest.fixture(scope="module")
def shared(tmp_path_factory) -> Iterator[Workspace]:
    tmp = tmp_path_factory.mktemp("pages")
    repo = make_repo(tmp / "ws" / "proj")
    settings = Settings(data_dir=tmp / "data", workspace_root=tmp / "ws", embedder="off")
    with Workspace.open(settings) as opened:
        opened.bootstrap(repo, "proj", background=False)
        yield opened


@settings(max_examples=30, deadline=None)
@given(budget=st.integers(12, 400), start=st.integers(1, 200))
def test_budgeted_pages_never_exceed_the_budget_and_continue_without_gaps(shared, budget, start):
    whole = shared.page("proj", "pkg/util.py")
    texts, at = [], start
    while at is not None:
        page = shared.page("proj", "pkg/util.py", (at, None), budget_tokens=budget)
        assert page.start_line == at
        assert page.token_count == count_tokens(page.text) <= budget
        texts.append(page.text)
        at = page.continuation
    assert "".join(texts) == "".join(split_lines(whole.text)[start - 1 :])


def test_a_stale_file_read_during_an_index_run_is_served_at_once_and_not_fresh(workspace):
    (root_of(workspace) / "core.py").write_text("during = 1\n")
    holding, release = threading.Event(), threading.Event()

    def index_run() -> None:
        with workspace._index.exclusive("proj"):  # stands in for a run holding the repository
            holding.set()
            release.wait(30)

    thread = threading.Thread(target=index_run)
    thread.start()
    try:
        assert holding.wait(30)
        record = workspace.store.get(STRUCTURAL, repo_key("proj"))
        assert record is not None and isinstance(record.value, dict)
        run = {"status": "running", "pid": os.getpid(), "phase": "parsing"}
        workspace.store.put(STRUCTURAL, repo_key("proj"), {**record.value, "index": run})
        page = workspace.page("proj", "core.py")
        assert not release.is_set()  # (answered while the run still held the repository)
    finally:
        release.set()
        thread.join(30)
    assert page.text == "during = 1\n"
    assert not page.fresh
    assert stored_blob(workspace, "core.py") != page.blob_id
