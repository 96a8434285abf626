import json
from pathlib import Path

from typer.testing import CliRunner

from repocontext.cli import app
from repocontext.testing import make_repo

runner = CliRunner()


FILES = {"src/calc.py": "def add(a, b):\n    return a + b\n", "notes.txt": "hello\n"}


def invoke(*args: str, code: int = 0) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == code, result.output
    return result.stdout if code == 0 else result.stderr


def test_list_reset_and_remove_with_json(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "calc", FILES)
    data = str(tmp_path / "data")
    invoke("index", str(repo), "--data-dir", data, "--json")
    invoke("memory", "remember", "decisions", "--title", "Keep add pure", "--data-dir", data)
    listed = json.loads(invoke("repos", "list", "--data-dir", data, "--json"))
    assert [(r["repoId"], r["files"]) for r in listed["repos"]] == [("calc", 2)]

    reset = json.loads(invoke("repos", "reset", "calc", "--data-dir", data, "--json"))
    assert reset["memoryPreserved"] is True and reset["entriesDeleted"] > 0
    assert reset["treesSwept"][0] == "structural"
    assert "memory" not in reset["treesSwept"]
    listed = json.loads(invoke("repos", "list", "--data-dir", data, "--json"))
    assert [(r["files"], r["vectors"]) for r in listed["repos"]] == [(0, 0)]
    topics = json.loads(invoke("memory", "topics", "--data-dir", data, "--json"))
    assert topics["topics"] == [{"topic": "decisions", "count": 1}]

    removed = json.loads(invoke("repos", "remove", "calc", "--data-dir", data, "--json"))
    assert removed["existed"] is True and removed["removed"]["memory"] == 1
    assert removed["totalRemoved"] == sum(removed["removed"].values())
    assert json.loads(invoke("repos", "list", "--data-dir", data, "--json")) == {"repos": []}
    assert (repo / "src" / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"


def test_text_output_and_errors(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "calc", FILES)
    data = str(tmp_path / "data")
    assert "store.not_found" in invoke("repos", "list", "--data-dir", data, code=1)
    invoke("index", str(repo), "--data-dir", data, "--json")
    assert "calc" in invoke("repos", "list", "--data-dir", data)
    assert "memory kept" in invoke("repos", "reset", "calc", "--data-dir", data)
    assert "repo.not_found" in invoke("repos", "reset", "nope", "--data-dir", data, code=1)
    assert "removed" in invoke("repos", "remove", "calc", "--data-dir", data)
    text = invoke("repos", "remove", "calc", "--data-dir", data)
    assert text.strip() == "calc: not registered; nothing removed"
    assert invoke("repos", "list", "--data-dir", data).strip() == "no repository is registered"
