import json
import subprocess
import sys
import urllib.request
from pathlib import Path

from typer.testing import CliRunner

from repocontext.cli import app
from repocontext.testing import free_port, make_repo, wait_live
from repocontext.tokens import count_tokens

runner = CliRunner()


FILES = {
    "src/calc.py": (
        "def add(a, b):\n    return a + b\n\n\nclass Calculator:\n    def twice(self, x):\n"
        "        return add(x, x)\n"
    ),
    "README.md": "A calculator that can add.\n",
}


def invoke(*args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


def test_search_and_context_with_and_without_json(tmp_path):
    repo = make_repo(tmp_path / "calc", FILES)
    data = str(tmp_path / "data")
    invoke("index", str(repo), "--data-dir", data, "--json")
    found = json.loads(invoke("search", "Calculator twice", "--data-dir", data, "--json"))
    assert found["hits"][0]["path"] == "src/calc.py"
    assert "symbol:src.calc.Calculator" in found["hits"][0]["reasons"]
    assert set(found) == {"mode", "retrievalPath", "hits", "freshness"}  # the tool's wire form
    assert set(found["hits"][0]) == {"key", "path", "score", "reasons", "entry", "lines"}
    assert "src/calc.py:" in invoke("search", "calculator", "--data-dir", data)
    bundle = json.loads(
        invoke("context", "add numbers", "--budget", "2000", "--data-dir", data, "--json")
    )
    assert bundle["responseTokens"] <= 2000
    assert "content" not in bundle["entries"][0]  # the code is the text, not the JSON
    text = invoke("context", "add numbers", "--budget", "2000", "--data-dir", data)
    code, summary = text.rstrip("\n").rsplit("\n", 1)
    assert summary.startswith(f"-- {bundle['detail']} bundle: {bundle['responseTokens']}/2000")
    # The text block as sent: it and the JSON are exactly what responseTokens counts.
    compact = json.dumps(bundle, separators=(",", ":"), ensure_ascii=False)
    assert bundle["responseTokens"] == count_tokens(code + "\n") + count_tokens(compact)
    assert code.startswith("src/calc.py:1-")
    with_code = json.loads(
        invoke("context", "add numbers", "--budget", "2000", "--data-dir", data, "--json-code")
    )
    assert with_code["entries"][0]["content"] in code


def test_stats_reads_a_running_server(tmp_path):
    repo = make_repo(tmp_path / "calc", FILES)
    data = tmp_path / "data"
    cli = str(Path(sys.executable).parent / "repocontext")
    port = str(free_port())
    server = subprocess.Popen(
        [
            cli,
            "serve",
            "--transport",
            "http",
            "--workers",
            "1",
            "--port",
            port,
            "--data-dir",
            str(data),
            "--repo",
            str(repo),
            "--reconcile",
            "off",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_live(url, server)
        figures = json.loads(invoke("stats", "--url", url, "--json"))
        assert figures == {
            "calls": 0,
            "responseTokens": 0,
            "readsReplacedTokens": 0,
            "netSavedTokens": 0,
            "windowSeconds": 3600.0,
        }
        counts = ("calls", "responseTokens", "readsReplacedTokens", "netSavedTokens")
        assert all(type(figures[name]) is int for name in counts)  # counts, not floats
        shortest = json.loads(urllib.request.urlopen(f"{url}/stats?windowSeconds=0").read())
        assert shortest["windowSeconds"] == 1.0  # clamped to the shortest window
        metrics = urllib.request.urlopen(f"{url}/metrics", timeout=5).read().decode()
        assert "# TYPE repocontext_context_calls_total counter" in metrics
        assert "repocontext_response_tokens_total 0" in metrics
    finally:
        server.terminate()
        server.wait(10)
    refused = runner.invoke(app, ["stats", "--url", "http://127.0.0.1:9"])
    assert refused.exit_code != 0 and "no server answered" in refused.output


def test_stats_of_a_server_with_a_tokens_file_needs_a_token(tmp_path):
    repo = make_repo(tmp_path / "calc", FILES)
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps({"tokens": [{"token": "t-reader", "role": "reader"}]}))
    cli = str(Path(sys.executable).parent / "repocontext")
    port = str(free_port())
    server = subprocess.Popen(
        [
            *(cli, "serve", "--transport", "http", "--port", port, "--workers", "1"),
            *("--data-dir", str(tmp_path / "d"), "--repo", str(repo), "--reconcile", "off"),
            *("--auth-tokens", str(tokens)),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_live(url, server)
        refused = runner.invoke(app, ["stats", "--url", url])
        assert refused.exit_code == 1 and "auth.unauthorized" in refused.output
        figures = json.loads(invoke("stats", "--url", url, "--token", "t-reader", "--json"))
        assert figures["calls"] == 0
    finally:
        server.terminate()
        server.wait(10)


def test_search_and_context_refuse_out_of_range_numbers_naming_the_option(tmp_path):
    repo = make_repo(tmp_path / "calc", FILES)
    data = str(tmp_path / "data")
    invoke("index", str(repo), "--data-dir", data, "--json")
    for args, words in (
        (["search", "add", "-k", "0"], "k must be in 1..100"),
        (["search", "add", "-k", "101"], "k must be in 1..100"),
        (["context", "add", "--top", "0"], "top must be in 1..50"),
        (["context", "add", "--budget", "-1"], "budget must be in 1..200000"),
        (["related", "src/calc.py", "--limit", "0"], "limit must be in 1..500"),
    ):
        result = runner.invoke(app, [*args, "--data-dir", data])
        assert result.exit_code == 1, args
        assert "error [input.invalid]" in result.output and words in result.output, args
    kept = json.loads(
        invoke("search", "add", "-k", "100", "--scope", "bogus", "--data-dir", data, "--json")
    )
    assert kept["hits"][0]["path"] == "src/calc.py"  # an unknown scope still means code


def test_related_pages_its_lists(tmp_path):
    repo = make_repo(tmp_path / "calc", FILES)
    for i in range(3):
        (repo / "src" / f"use{i}.py").write_text("from src.calc import add\n\nX = add(1, 2)\n")
    data = str(tmp_path / "data")
    invoke("index", str(repo), "--data-dir", data, "--json")
    args = ["related", "src/calc.py", "--data-dir", data]
    whole = json.loads(invoke(*args, "--json"))
    first = json.loads(invoke(*args, "--limit", "1", "--json"))
    assert len(whole["dependents"]) > 1 and whole["truncated"] is False
    assert (first["dependents"], first["truncated"], first["nextOffset"]) == (
        whole["dependents"][:1],
        True,
        1,
    )
    assert "(more: --offset 1)" in invoke(*args, "--limit", "1")
