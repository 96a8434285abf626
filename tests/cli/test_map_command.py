import json
import subprocess
from pathlib import Path

from typer.testing import CliRunner

from repocontext.cli import app
from repocontext.tokens import count_tokens

runner = CliRunner()


def make_repo(root: Path) -> Path:
    (root / "lib").mkdir(parents=True)
    (root / "lib" / "shapes.py").write_text(
        "class Circle:\n    def area(self):\n        return 3\n\n\ndef unit():\n    return 1\n"
    )
    for name in ("draw", "paint"):
        (root / "lib" / f"{name}.py").write_text(
            f"from lib.shapes import Circle, unit\n\n\ndef {name}():\n"
            "    return Circle().area() * unit()\n"
        )
    (root / "notes.txt").write_text("remember the milk\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def invoke(*args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


def test_map_prints_the_ranked_map_as_text_and_as_the_tools_json(tmp_path):
    repo = make_repo(tmp_path / "geo")
    data = str(tmp_path / "data")
    invoke("index", str(repo), "--data-dir", data, "--json")
    wire = json.loads(invoke("map", "geo", "--data-dir", data, "--json"))
    assert set(wire) == {"repoId", "budgetTokens", "tokenCount", "files", "truncated", "entries"}
    assert wire["entries"][0] == {
        "path": "lib/shapes.py",
        "symbols": ["Circle", "unit", "Circle.area"],
    }
    text = invoke("map", "--data-dir", data)  # the only repository, by default
    head, *lines = text.rstrip("\n").split("\n")
    assert head == f"# geo: 4 of 4 files, {wire['tokenCount']}/1024 tokens"
    assert lines[0] == "lib/shapes.py: Circle, unit, Circle.area"
    assert count_tokens("\n".join(lines)) == wire["tokenCount"]


def test_map_takes_a_query_a_budget_and_excluded_paths(tmp_path):
    repo = make_repo(tmp_path / "geo")
    data = str(tmp_path / "data")
    invoke("index", str(repo), "--data-dir", data)
    args = ("map", "geo", "--data-dir", data, "--json")
    steered = json.loads(invoke(*args, "--query", "milk notes", "--exclude", "lib/draw.py"))
    paths = [e["path"] for e in steered["entries"]]
    assert paths[0] == "notes.txt"
    assert "lib/draw.py" not in paths
    small = json.loads(invoke(*args, "--budget", "64"))
    assert small["tokenCount"] <= 64


def test_map_refuses_a_budget_out_of_range_and_an_unknown_repository(tmp_path):
    repo = make_repo(tmp_path / "geo")
    data = str(tmp_path / "data")
    invoke("index", str(repo), "--data-dir", data)
    refused = runner.invoke(app, ["map", "geo", "--budget", "10", "--data-dir", data])
    assert refused.exit_code == 1
    assert "error [input.invalid]" in refused.stderr
    unknown = runner.invoke(app, ["map", "nope", "--data-dir", data])
    assert unknown.exit_code == 1
    assert "error [repo.not_found]" in unknown.stderr
