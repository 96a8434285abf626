"""repocontext read: a page on stdout (or as JSON), its summary on stderr, refusals as codes."""

import json
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from repocontext.cli import app
from repocontext.cli._reading import parse_lines
from repocontext.errors import InvalidInputError
from repocontext.tokens import count_tokens

runner = CliRunner()

BODY = "".join(f"line_{i} = {i}\n" for i in range(1, 41))


@pytest.fixture
def indexed(tmp_path: Path) -> tuple[Path, str]:
    """A git repository `calc` indexed into a data directory; returns (root, data dir)."""
    root = tmp_path / "calc"
    root.mkdir()
    (root / "calc.py").write_text(BODY)
    (root / "dos.txt").write_bytes(b"a\r\nb")
    (root / ".gitignore").write_text(".env\n")
    (root / ".env").write_text("KEY=1\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    data = str(tmp_path / "data")
    done = runner.invoke(app, ["index", str(root), "--data-dir", data])
    assert done.exit_code == 0, done.output
    return root, data


def hash_object(root: Path, name: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), "hash-object", name], capture_output=True, check=True, text=True
    )
    return done.stdout.strip()


def test_read_prints_the_file_unchanged_and_a_summary_on_stderr(indexed):
    root, data = indexed
    done = runner.invoke(app, ["read", "calc", "dos.txt", "--data-dir", data])
    assert done.exit_code == 0, done.output
    assert done.stdout_bytes == b"a\r\nb"
    assert f"blob {hash_object(root, 'dos.txt')}" in done.stderr
    assert "dos.txt lines 1-2" in done.stderr


def test_read_json_is_the_tool_result(indexed):
    root, data = indexed
    done = runner.invoke(
        app, ["read", "calc", "calc.py", "--lines", "3-4", "--data-dir", data, "--json"]
    )
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout) == {
        "path": "calc.py",
        "startLine": 3,
        "endLine": 4,
        "text": "line_3 = 3\nline_4 = 4\n",
        "blobId": hash_object(root, "calc.py"),
        "tokenCount": count_tokens("line_3 = 3\nline_4 = 4\n"),
        "fresh": True,
        "continuation": None,
    }


def test_read_with_a_budget_says_where_the_next_page_starts(indexed):
    _, data = indexed
    done = runner.invoke(app, ["read", "calc", "calc.py", "--budget", "30", "--data-dir", data])
    assert done.exit_code == 0, done.output
    assert count_tokens(done.stdout) <= 30
    shown = done.stdout.count("\n")
    assert f"next: --lines {shown + 1}-" in done.stderr
    rest = runner.invoke(
        app, ["read", "calc", "calc.py", "--lines", f"{shown + 1}-", "--data-dir", data]
    )
    assert done.stdout + rest.stdout == BODY


def test_read_of_a_changed_file_reindexes_it(indexed):
    root, data = indexed
    (root / "calc.py").write_text("changed = 1\n")
    done = runner.invoke(app, ["read", "calc", "calc.py", "--data-dir", data, "--json"])
    assert json.loads(done.stdout)["fresh"] is True
    again = runner.invoke(app, ["read", "calc", "calc.py", "--data-dir", data, "--json"])
    assert json.loads(again.stdout)["blobId"] == hash_object(root, "calc.py")


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["calc", ".env"], "path.outside_workspace"),
        (["calc", "../elsewhere.py"], "path.outside_workspace"),
        (["calc", "gone.py"], "path.not_found"),
        (["calc", "calc.py", "--lines", "9-2"], "input.invalid"),
        (["calc", "calc.py", "--lines", "x"], "input.invalid"),
        (["nope", "calc.py"], "repo.not_found"),
    ],
)
def test_read_refusals_print_their_code_and_exit_1(indexed, args, code):
    _, data = indexed
    done = runner.invoke(app, ["read", *args, "--data-dir", data])
    assert done.exit_code == 1
    assert f"error [{code}]" in done.stderr
    assert "KEY" not in done.output


@pytest.mark.parametrize(
    ("value", "expected"),
    [("3-7", (3, 7)), ("3-", (3, None)), ("5", (5, 5)), (" 2-4 ", (2, 4)), (None, None)],
)
def test_lines_take_a_range_an_open_end_or_one_line(value, expected):
    assert parse_lines(value) == expected


@pytest.mark.parametrize("value", ["", "a-b", "-3", "1-2-3", "1,2"])
def test_lines_that_are_no_range_are_refused(value):
    with pytest.raises(InvalidInputError):
        parse_lines(value)
