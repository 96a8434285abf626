"""Grep over a repository's indexed files: matching, context, paging, and the path guard."""

import os
from pathlib import Path

import pytest

from repocontext.errors import InvalidInputError, InvalidTokenError, NotFoundError
from repocontext.search import GrepRequest
from repocontext.settings import Settings
from repocontext.testing import make_repo
from repocontext.workspace import Workspace

pytestmark = pytest.mark.timeout(120)

APP = (
    "import os\n"  # 1
    "\n"  # 2
    "def load(path):\n"  # 3
    "    return open(path).read()\n"  # 4
    "\n"  # 5
    "def save(path, text):\n"  # 6
    "    handle = open(path, 'w')\n"  # 7
    "    handle.write(text)\n"  # 8
    "    return handle\n"  # 9
)
FILES = {
    "pkg/app.py": APP,
    "pkg/util.py": "def helper():\n    return open('x')\n",
    "README.md": "Open the app with open().\r\nÉtat: OPEN\r\n",
    "docs/notes.txt": "nothing to see\nlast line without newline",
    ".gitignore": "secret.txt\n",
    "secret.txt": "open sesame\n",
}


@pytest.fixture
def workspace(tmp_path: Path):
    """A workspace with the repository `app` (FILES) indexed; `secret.txt` is ignored."""
    make_repo(tmp_path / "ws" / "app", FILES)
    settings = Settings(
        data_dir=tmp_path / "data", workspace_root=tmp_path / "ws", reconcile="off", embedder="off"
    )
    with Workspace.open(settings) as opened:
        opened.bootstrap(tmp_path / "ws" / "app", "app", background=False)
        yield opened


def grep(workspace: Workspace, pattern: str, **options):
    return workspace.grep(GrepRequest("app", pattern, **options))


def where(page) -> list[tuple[str, int]]:
    return [(m.path, m.line) for m in page.matches]


def test_a_literal_is_found_in_path_then_line_order_with_its_column(workspace):
    page = grep(workspace, "open(", context_lines=0)
    assert where(page) == [
        ("README.md", 1),
        ("pkg/app.py", 4),
        ("pkg/app.py", 7),
        ("pkg/util.py", 2),
    ]
    assert page.matches[0].text == "Open the app with open()."  # (no \r: the line ending goes)
    assert page.matches[1].column == len("    return ") + 1
    assert page.truncated is False and page.continuation_token is None
    assert page.files_searched == 5  # (the ignored secret.txt is not in the index)


def test_an_ignored_file_is_never_searched(workspace):
    assert grep(workspace, "sesame").matches == ()


def test_context_lines_are_shown_once_and_stop_at_the_neighbouring_match(workspace):
    page = grep(workspace, "handle", glob="pkg/app.py", context_lines=2)
    assert where(page) == [("pkg/app.py", 7), ("pkg/app.py", 8), ("pkg/app.py", 9)]
    first, second, third = page.matches
    assert first.before == ("", "def save(path, text):")
    assert first.after == ()  # (line 8 is the next match)
    assert second.before == () and second.after == ()
    assert third.before == () and third.after == ()  # (the file ends at line 9)


def test_case_folding_is_unicode_and_optional(workspace):
    assert where(grep(workspace, "état", case_sensitive=False)) == [("README.md", 2)]
    assert grep(workspace, "état").matches == ()
    insensitive = grep(workspace, "open", case_sensitive=False, glob="README.md")
    assert where(insensitive) == [("README.md", 1), ("README.md", 2)]


def test_a_regular_expression_matches_within_lines_only(workspace):
    assert where(grep(workspace, r"^def \w+\(path", regex=True)) == [
        ("pkg/app.py", 3),
        ("pkg/app.py", 6),
    ]
    assert grep(workspace, r"load\(path\):\s+return", regex=True).matches == ()
    assert where(grep(workspace, r"newline$", regex=True)) == [("docs/notes.txt", 2)]


def test_a_literal_pattern_is_not_read_as_a_regular_expression(workspace):
    assert grep(workspace, "open(path).read()").matches[0].line == 4
    assert grep(workspace, "o.en").matches == ()


def test_a_pattern_matching_the_empty_string_reports_real_lines_only(workspace):
    page = grep(workspace, "x*", regex=True, glob="docs/*", context_lines=0)
    assert where(page) == [("docs/notes.txt", 1), ("docs/notes.txt", 2)]


def test_a_catastrophic_backtracking_pattern_runs_in_linear_time(workspace):
    root = Path(workspace.get_repo("app").root)
    (root / "pkg" / "long.txt").write_text("a" * 200_000 + "!\n")
    workspace.refresh("app", ["pkg/long.txt"])
    # (Python's re would backtrack for longer than the age of the universe here.)
    assert grep(workspace, "(a+)+$", regex=True, glob="*.txt").matches == ()


@pytest.mark.parametrize(
    ("pattern", "options", "wanted"),
    [
        ("(a)\\1", {"regex": True}, "RE2"),
        ("(?=x)", {"regex": True}, "look-around"),
        ("([a-z]", {"regex": True}, "regular expression"),
        ("", {}, "1 to 1000"),
        ("two\nlines", {}, "within one line"),
        ("x", {"glob": "["}, "glob"),
        ("x", {"context_lines": 11}, "context_lines"),
        ("x", {"page_size": 0}, "page_size"),
    ],
)
def test_invalid_patterns_globs_and_bounds_are_refused_with_a_hint(
    workspace, pattern, options, wanted
):
    with pytest.raises(InvalidInputError) as raised:
        grep(workspace, pattern, **options)
    assert wanted in raised.value.message + raised.value.hint


def test_an_unknown_repository_is_refused(workspace):
    with pytest.raises(NotFoundError):
        workspace.grep(GrepRequest("nope", "x"))


def test_pages_continue_where_the_last_ended_and_add_up_to_the_whole(workspace):
    whole = grep(workspace, "e", context_lines=1, page_size=500)
    assert not whole.truncated
    seen, token = [], None
    while True:
        page = grep(workspace, "e", context_lines=1, page_size=3, token=token)
        seen += where(page)
        if not page.truncated:
            assert page.continuation_token is None
            break
        assert len(page.matches) == 3
        token = page.continuation_token
    assert seen == where(whole)


def test_a_token_of_another_query_or_a_malformed_one_is_refused(workspace):
    token = grep(workspace, "e", page_size=1).continuation_token
    assert token is not None
    with pytest.raises(InvalidTokenError, match="another query"):
        grep(workspace, "f", token=token)
    with pytest.raises(InvalidTokenError):
        grep(workspace, "e", token="not a token")


def test_a_long_line_is_cut_around_its_match(workspace):
    root = Path(workspace.get_repo("app").root)
    (root / "pkg" / "min.js").write_text("var a=1;" * 200 + "NEEDLE();" + "b();" * 200 + "\n")
    workspace.refresh("app", ["pkg/min.js"])
    (match,) = grep(workspace, "NEEDLE").matches
    assert "NEEDLE" in match.text
    assert match.text.startswith("…") and match.text.endswith("…")
    assert len(match.text) == 300 + 2
    assert match.column == 1601


def test_a_file_turned_binary_since_indexing_is_skipped(workspace):
    root = Path(workspace.get_repo("app").root)
    (root / "pkg" / "util.py").write_bytes(b"\x00open(")
    assert "pkg/util.py" not in {m.path for m in grep(workspace, "open(").matches}


def test_a_file_replaced_by_a_symlink_out_of_the_root_is_not_read(workspace, tmp_path):
    root = Path(workspace.get_repo("app").root)
    outside = tmp_path / "outside.txt"
    outside.write_text("open(the vault)\n")
    (root / "pkg" / "util.py").unlink()
    (root / "pkg" / "util.py").symlink_to(outside)
    assert "pkg/util.py" not in {m.path for m in grep(workspace, "open(").matches}


def test_a_directory_replaced_by_a_symlink_out_of_the_root_is_not_entered(workspace, tmp_path):
    root = Path(workspace.get_repo("app").root)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "app.py").write_text("open(the vault)\n")
    (elsewhere / "util.py").write_text("open(the vault)\n")
    os.rename(root / "pkg", tmp_path / "pkg-moved")
    (root / "pkg").symlink_to(elsewhere, target_is_directory=True)
    assert where(grep(workspace, "open(")) == [("README.md", 1)]


def test_a_symlinked_file_inside_the_root_is_read_through_its_link(tmp_path):
    repo = make_repo(tmp_path / "ws" / "app", {"real.py": "open(here)\n"})
    (repo / "link.py").symlink_to(repo / "real.py")
    settings = Settings(
        data_dir=tmp_path / "data", workspace_root=tmp_path / "ws", reconcile="off", embedder="off"
    )
    with Workspace.open(settings) as workspace:
        workspace.bootstrap(repo, "app", background=False)
        assert where(grep(workspace, "open(")) == [("link.py", 1), ("real.py", 1)]


def test_a_file_indexed_after_a_search_is_found_by_the_next_one(workspace):
    assert grep(workspace, "fresh_marker").matches == ()
    root = Path(workspace.get_repo("app").root)
    (root / "pkg" / "late.py").write_text("fresh_marker = 1\n")
    assert grep(workspace, "fresh_marker").matches == ()  # (not indexed yet)
    workspace.refresh("app", ["pkg/late.py"])
    assert where(grep(workspace, "fresh_marker")) == [("pkg/late.py", 1)]


def test_a_file_ignored_since_it_was_indexed_is_not_reported(workspace):
    root = Path(workspace.get_repo("app").root)
    (root / ".gitignore").write_text("secret.txt\npkg/util.py\n")  # (no index pass since)
    assert where(grep(workspace, "open(", context_lines=0)) == [
        ("README.md", 1),
        ("pkg/app.py", 4),
        ("pkg/app.py", 7),
    ]


def test_a_new_ignore_file_in_a_subdirectory_hides_what_it_ignores(workspace):
    root = Path(workspace.get_repo("app").root)
    (root / "pkg" / ".gitignore").write_text("app.py\n")
    assert where(grep(workspace, "open(", context_lines=0)) == [
        ("README.md", 1),
        ("pkg/util.py", 2),
    ]
