import json
from pathlib import Path

from typer.testing import CliRunner

from repocontext.cli import app
from repocontext.testing import make_repo

runner = CliRunner()


def invoke(*args: str, code: int = 0) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == code, result.output
    return result.stdout


def test_memory_commands_with_and_without_json(tmp_path: Path):
    repo = make_repo(tmp_path / "proj", {"app.py": "def run():\n    return 1\n"})
    data = str(tmp_path / "data")
    invoke("index", str(repo), "--data-dir", data, "--json")
    made = json.loads(
        invoke(
            "memory",
            "remember",
            "decisions",
            "--title",
            "Keep run() pure",
            "--kind",
            "decision",
            "--tag",
            "style",
            "--link",
            "anchoredTo=repo/proj/file/app.py",
            "--ttl",
            "600",
            "--data-dir",
            data,
            "--json",
        )
    )
    key = made["key"]
    assert made["fields"]["kind"] == "decision"
    assert made["links"] == {"anchoredTo": ["repo/proj/file/app.py"]}
    text = invoke("memory", "recall", key, "--data-dir", data)
    assert "Keep run() pure" in text and "anchoredTo -> repo/proj/file/app.py" in text
    updated = json.loads(
        invoke(
            "memory",
            "update",
            key,
            "--body",
            "No I/O.",
            "--untag",
            "style",
            "--data-dir",
            data,
            "--json",
        )
    )
    assert updated["fields"]["body"] == "No I/O." and updated["tags"] == []
    assert invoke("memory", "topics", "--data-dir", data).strip() == "decisions\t1"
    walked = json.loads(invoke("memory", "neighbors", key, "--data-dir", data, "--json"))
    assert [n["key"] for n in walked["nodes"]] == ["repo/proj/file/app.py"]
    (repo / "app.py").write_text("def run():\n    return 2\n")
    invoke("index", str(repo), "--data-dir", data, "--json")
    assert "stale: anchoredTo -> repo/proj/file/app.py (changed)" in invoke(
        "memory", "recall", key, "--data-dir", data
    )
    assert (
        json.loads(invoke("memory", "forget", key, "--data-dir", data, "--json"))["forgotten"]
        is True
    )
    assert "no such entry" in invoke("memory", "recall", key, "--data-dir", data)


def test_memory_errors_exit_non_zero_with_code_and_hint(tmp_path: Path):
    repo = tmp_path / "proj"
    repo.mkdir()
    (repo / "a.py").write_text("x = 1\n")
    data = str(tmp_path / "data")
    invoke("index", str(repo), "--data-dir", data, "--json")
    result = runner.invoke(
        app, ["memory", "remember", "bad/topic", "--title", "t", "--data-dir", data]
    )
    assert result.exit_code != 0
    assert "input.invalid" in result.output
    result = runner.invoke(app, ["memory", "remember", "t", "--link", "oops", "--data-dir", data])
    assert result.exit_code != 0 and "relation=key" in result.output


def test_a_claim_holder_writes_and_closes_its_entry_from_the_cli(tmp_path: Path):
    repo = tmp_path / "proj"
    repo.mkdir()
    (repo / "app.py").write_text("x = 1\n")
    data = str(tmp_path / "data")
    invoke("index", str(repo), "--data-dir", data)
    key = json.loads(
        invoke("memory", "remember", "backlog", "--title", "job", "--data-dir", data, "--json")
    )["key"]
    token = json.loads(
        invoke("claims", "claim", key, "--owner", "w1", "--data-dir", data, "--json")
    )["fencingToken"]
    refused = runner.invoke(app, ["memory", "update", key, "--status", "done", "--data-dir", data])
    assert refused.exit_code == 1 and "claim.required" in refused.output
    done = json.loads(
        invoke(
            "memory",
            "update",
            key,
            "--status",
            "done",
            "--fencing-token",
            str(token),
            "--data-dir",
            data,
            "--json",
        )
    )
    assert done["fields"]["status"] == "done"
    reopened = json.loads(
        invoke(
            "memory",
            "update",
            key,
            "--status",
            "",
            "--fencing-token",
            str(token),
            "--data-dir",
            data,
            "--json",
        )
    )
    assert "status" not in reopened["fields"]
    gone = json.loads(
        invoke("memory", "forget", key, "--fencing-token", str(token), "--data-dir", data, "--json")
    )
    assert gone["forgotten"] is True
