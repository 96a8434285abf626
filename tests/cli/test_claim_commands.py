import json
from pathlib import Path

from typer.testing import CliRunner

from repocontext.cli import app

runner = CliRunner()


def invoke(*args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


def test_claims_commands(tmp_path: Path):
    repo = tmp_path / "proj"
    repo.mkdir()
    (repo / "a.py").write_text("x = 1\n")
    data = str(tmp_path / "data")
    invoke("index", str(repo), "--data-dir", data, "--json")
    key = json.loads(
        invoke("memory", "remember", "backlog", "--title", "job", "--data-dir", data, "--json")
    )["key"]
    got = json.loads(
        invoke("claims", "next", "backlog", "--owner", "w1", "--data-dir", data, "--json")
    )
    assert got["key"] == key and got["fencingToken"] == 1
    assert "not granted (contended)" in invoke(
        "claims", "claim", key, "--owner", "w2", "--data-dir", data
    )
    assert "held by w1, token 1" in invoke("claims", "status", key, "--data-dir", data)
    assert "granted=True" in invoke(
        "claims", "renew", key, "1", "--lease", "30", "--data-dir", data
    )
    assert "released=True" in invoke("claims", "release", key, "1", "--data-dir", data)
    assert "released=False (unclaimed)" in invoke("claims", "release", key, "1", "--data-dir", data)
    assert "granted, token 2" in invoke("claims", "claim", key, "--owner", "w2", "--data-dir", data)
    bad = runner.invoke(app, ["claims", "next", "a b", "--owner", "w", "--data-dir", data])
    assert bad.exit_code == 1 and "error [input.invalid]" in bad.output
    never = runner.invoke(app, ["claims", "renew", key, "9", "--data-dir", data])
    assert never.exit_code == 1 and "claim.unissued_token" in never.output


def test_a_wait_or_walk_out_of_range_is_refused_naming_the_range(tmp_path: Path):
    repo = tmp_path / "proj"
    repo.mkdir()
    (repo / "a.py").write_text("x = 1\n")
    data = str(tmp_path / "data")
    invoke("index", str(repo), "--data-dir", data, "--json")
    key = json.loads(
        invoke("memory", "remember", "backlog", "--title", "job", "--data-dir", data, "--json")
    )["key"]
    for args, words in (
        (["claims", "claim", key, "--owner", "w", "--wait", "-1"], "wait must be in 0..300,"),
        (["claims", "claim", key, "--owner", "w", "--wait", "301"], "wait must be in 0..300,"),
        (["memory", "neighbors", key, "--depth", "0"], "depth must be in 1..3"),
        (["memory", "neighbors", key, "--max-nodes", "101"], "max-nodes must be in 1..100"),
    ):
        result = runner.invoke(app, [*args, "--data-dir", data])
        assert result.exit_code == 1 and "input.invalid" in result.output, args
        assert words in result.output, (args, result.output)
