"""repocontext symbol and repocontext grep: code on stdout, notes on stderr, --json the tools'."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from repocontext.cli import app
from repocontext.testing import make_repo

runner = CliRunner()

SHAPES = (
    "class Circle:\n"
    "    def area(self):\n"
    "        return 3.14 * self.r * self.r\n"
    "\n"
    "\n"
    "def unit():\n"
    "    return Circle()\n"
)


@pytest.fixture
def indexed(tmp_path: Path) -> str:
    """The git repository `geo` indexed into a data directory; returns the data directory."""
    root = make_repo(
        tmp_path / "geo",
        {"geo/shapes.py": SHAPES, "notes.md": "Circle area notes\n", ".gitignore": "*.tmp\n"},
    )
    (root / "draft.tmp").write_text("Circle draft\n")
    data = str(tmp_path / "data")
    done = runner.invoke(app, ["index", str(root), "--data-dir", data])
    assert done.exit_code == 0, done.output
    return data


def test_symbol_prints_the_definition_after_its_class_header(indexed):
    done = runner.invoke(app, ["symbol", "Circle.area", "--data-dir", indexed])
    assert done.exit_code == 0, done.output
    assert done.stdout == (
        "==> geo/shapes.py:2-3  geo.shapes.Circle.area  (method, "
        f"{json_of(indexed, 'Circle.area')['symbols'][0]['tokenCount']} tokens)\n"
        "class Circle:\n"
        "    def area(self):\n"
        "        return 3.14 * self.r * self.r\n"
    )
    assert "1 definitions" in done.stderr


def json_of(data: str, *names: str) -> dict:
    done = runner.invoke(app, ["symbol", *names, "--data-dir", data, "--json"])
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)


def test_symbol_reports_unknown_names_with_close_ones_on_stderr(indexed):
    done = runner.invoke(app, ["symbol", "unti", "unit", "--data-dir", indexed])
    assert done.exit_code == 0, done.output
    assert "==> geo/shapes.py:6-7  geo.shapes.unit" in done.stdout
    assert "not found: unti: no symbol of that name in the index (close: geo.shapes.unit)" in (
        done.stderr
    )


def test_symbol_json_and_budget(indexed):
    answer = json_of(indexed, "geo.shapes.Circle", "unit", "--budget", "20")
    assert [s["name"] for s in answer["symbols"]] == ["unit"]
    assert answer["omitted"][0]["fullyQualifiedName"] == "geo.shapes.Circle"


def test_grep_prints_matches_and_context_as_grep_does(indexed):
    done = runner.invoke(app, ["grep", "Circle", "-C", "1", "--data-dir", indexed])
    assert done.exit_code == 0, done.output
    assert done.stdout == (
        "geo/shapes.py:1:class Circle:\n"
        "geo/shapes.py-2-    def area(self):\n"
        "--\n"
        "geo/shapes.py-6-def unit():\n"
        "geo/shapes.py:7:    return Circle()\n"
        "--\n"
        "notes.md:1:Circle area notes\n"
    )
    assert "3 matches" in done.stderr


def test_grep_options_and_the_token_of_the_next_page(indexed):
    first = runner.invoke(
        app,
        [
            "grep",
            "circle",
            "-i",
            "--glob",
            "*.py",
            "--limit",
            "1",
            "-C",
            "0",
            "--data-dir",
            indexed,
        ],
    )
    assert first.exit_code == 0, first.output
    assert first.stdout == "geo/shapes.py:1:class Circle:\n"
    token = first.stderr.split("--token ")[1].strip()
    rest = runner.invoke(
        app,
        [
            "grep",
            "circle",
            "-i",
            "--glob",
            "*.py",
            "--token",
            token,
            "--json",
            "--data-dir",
            indexed,
        ],
    )
    assert rest.exit_code == 0, rest.output
    assert [m["line"] for m in json.loads(rest.stdout)["matches"]] == [7]


def test_grep_regex_errors_exit_1_with_the_code(indexed):
    done = runner.invoke(app, ["grep", "(?<=x)y", "--regex", "--data-dir", indexed])
    assert done.exit_code == 1
    assert "error [input.invalid]" in done.stderr
