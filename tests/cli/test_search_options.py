"""`search` and `context` as a benchmark drives them: modes, queries from files and stdin,
many queries in one process, file filters, and the warning of an embedder mismatch."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from repocontext.cli import app
from repocontext.testing import make_repo

runner = CliRunner()

FILES = {
    "src/calc.py": (
        "def add(a, b):\n    return a + b\n\n\nclass Calculator:\n    def twice(self, x):\n"
        "        return add(x, x)\n"
    ),
    "src/flags.py": (
        'def parse_flags(argv):\n    """Read --verbose and -x flags."""\n    return argv\n'
    ),
    "web/app.js": "export function addWidget(a, b) { return a + b; }\n",
    "README.md": "A calculator that can add.\n",
}


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A store with `calc` indexed and embedded with the default (static) embedder."""
    tmp = tmp_path_factory.mktemp("search_options")
    repo = make_repo(tmp / "calc", FILES)
    data = str(tmp / "data")
    ok("index", str(repo), "--data-dir", data, "--json")
    return data


def ok(*args: str, stdin: str | None = None, env: dict[str, str] | None = None) -> str:
    result = runner.invoke(app, list(args), input=stdin, env=env)
    assert result.exit_code == 0, result.output
    return result.stdout


def failed(*args: str, stdin: str | None = None) -> str:
    result = runner.invoke(app, list(args), input=stdin)
    assert result.exit_code == 1, result.output
    return result.stderr


def search_json(data: str, *args: str, stdin: str | None = None) -> dict:
    return json.loads(ok("search", *args, "--data-dir", data, "--json", stdin=stdin))


def test_mode_picks_the_retrieval_and_an_unknown_one_names_the_allowed(data: str) -> None:
    assert search_json(data, "add", "--mode", "keyword")["retrievalPath"] == "keyword.requested"
    assert search_json(data, "add", "--mode", "semantic")["mode"] == "semantic"
    assert search_json(data, "add", "--mode", "hybrid")["retrievalPath"] == "hybrid.exact"
    bundle = json.loads(
        ok("context", "add numbers", "--mode", "keyword", "--data-dir", data, "--json")
    )
    assert bundle["retrievalPath"] == "keyword.requested"
    for command in ("search", "context"):
        error = failed(command, "add", "--mode", "dense", "--data-dir", data)
        assert "error [input.invalid]: unknown mode 'dense'" in error
        assert "keyword, semantic, hybrid" in error


def test_a_query_comes_from_a_file_or_stdin_even_when_it_starts_with_a_dash(
    data: str, tmp_path: Path
) -> None:
    query_file = tmp_path / "query.txt"
    query_file.write_text("--verbose flags\n")
    from_file = search_json(data, "--query-file", str(query_file))
    from_stdin = search_json(data, "--query-file", "-", stdin="--verbose flags\n")
    after_dashes = json.loads(ok("search", "--data-dir", data, "--json", "--", "--verbose flags"))
    assert from_file["hits"][0]["path"] == "src/flags.py"
    assert from_stdin["hits"] == from_file["hits"] == after_dashes["hits"]
    task = json.loads(
        ok(
            "context",
            "--query-file",
            "-",
            "--budget",
            "3000",
            "--data-dir",
            data,
            "--json",
            stdin="-x flags parsing",
        )
    )
    assert task["entries"][0]["path"] == "src/flags.py"


@pytest.mark.parametrize("command", ["search", "context"])
def test_a_query_given_both_ways_or_neither_way_is_one_coded_error(
    data: str, tmp_path: Path, command: str
) -> None:
    (tmp_path / "q.txt").write_text("add")
    both = failed(command, "add", "--query-file", str(tmp_path / "q.txt"), "--data-dir", data)
    neither = failed(command, "--data-dir", data)
    missing = failed(command, "--query-file", str(tmp_path / "nope.txt"), "--data-dir", data)
    assert "error [input.invalid]:" in both and "not both" in both
    assert "not neither" in neither and "--query-file -" in neither and "`--`" in neither
    assert "cannot read the" in missing and "No such file" in missing


def test_language_and_glob_filter_the_hits(data: str) -> None:
    js = search_json(data, "add", "--language", "javascript")
    assert [hit["path"] for hit in js["hits"]] == ["web/app.js"]
    src = search_json(data, "add", "--glob", "src/**", "--glob", "*.md")
    assert {hit["path"] for hit in src["hits"]} <= {"src/calc.py", "src/flags.py", "README.md"}
    assert "web/app.js" not in {hit["path"] for hit in src["hits"]}
    error = failed("search", "add", "--language", "klingon", "--data-dir", data)
    assert "unknown language 'klingon'" in error


def test_a_batch_answers_every_line_in_one_process_and_a_bad_line_stops_nothing(
    data: str,
) -> None:
    lines = [
        json.dumps({"query": "add", "id": "q1"}),
        "",
        json.dumps({"query": "add", "k": 1, "mode": "keyword", "language": "javascript"}),
        json.dumps({"query": "add", "glob": ["src/**"], "scope": "code"}),
        json.dumps({"qeury": "typo"}),
        "not json",
        json.dumps({"query": "add", "k": 0, "id": 7}),
        json.dumps({"query": "add", "mode": "dense"}),
        json.dumps(["query"]),
    ]
    result = runner.invoke(
        app, ["search", "--queries", "-", "--data-dir", data], input="\n".join(lines) + "\n"
    )
    assert result.exit_code == 1, result.output
    answers = [json.loads(line) for line in result.stdout.splitlines()]
    assert [a["id"] for a in answers] == ["q1", 3, 4, 5, 6, 7, 8, 9]  # blank line 2: none
    single = search_json(data, "add")
    assert answers[0]["result"] == single  # the same object as `search --json`
    assert answers[1]["result"]["retrievalPath"] == "keyword.requested"
    assert [h["path"] for h in answers[1]["result"]["hits"]] == ["web/app.js"]
    assert all(h["path"].startswith("src/") for h in answers[2]["result"]["hits"])
    errors = {a["id"]: a["error"] for a in answers if "error" in a}
    assert set(errors) == {5, 6, 7, 8, 9}
    assert all(e["code"] == "input.invalid" and e["hint"] for e in errors.values())
    assert "unknown fields: qeury" in errors[5]["message"]
    assert "not JSON" in errors[6]["message"]
    assert "k must be in 1..100" in errors[7]["message"]
    assert "unknown mode 'dense'" in errors[8]["message"]
    assert "not a JSON object" in errors[9]["message"]
    assert "error: 5 of 8 queries failed" in result.stderr


def test_a_batch_of_good_lines_exits_zero_and_the_options_are_the_lines_defaults(
    data: str, tmp_path: Path
) -> None:
    batch = tmp_path / "queries.jsonl"
    batch.write_text(
        json.dumps({"query": "add", "id": "a"}) + "\n" + json.dumps({"query": "twice", "k": 3})
    )
    out = ok("search", "--queries", str(batch), "-k", "1", "--mode", "keyword", "--data-dir", data)
    first, second = (json.loads(line) for line in out.splitlines())
    assert (first["id"], len(first["result"]["hits"])) == ("a", 1)
    assert first["result"]["retrievalPath"] == "keyword.requested"
    assert second["id"] == 2 and second["result"]["hits"][0]["path"] == "src/calc.py"
    both = failed("search", "add", "--queries", str(batch), "--data-dir", data)
    assert "give no other query" in both


def test_a_store_embedded_with_another_embedder_warns_on_stderr_and_says_how_to_fix(
    data: str,
) -> None:
    minilm = {"REPOCONTEXT_EMBEDDER": "minilm"}
    result = runner.invoke(app, ["search", "add", "--data-dir", data, "--json"], env=minilm)
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert answer["retrievalPath"] == "keyword.embedder_mismatch"
    assert answer["warnings"] == [result.stderr.removeprefix("warning: ").strip()]
    assert "made with the 'static' embedder" in result.stderr
    assert "REPOCONTEXT_EMBEDDER=static" in result.stderr
    assert "REPOCONTEXT_EMBEDDER=minilm repocontext index" in result.stderr
    context = runner.invoke(app, ["context", "add", "--data-dir", data], env=minilm)
    assert context.exit_code == 0 and "'static' embedder" in context.stderr
    asked = runner.invoke(
        app, ["search", "add", "--mode", "hybrid", "--data-dir", data], env=minilm
    )
    assert asked.exit_code == 1
    assert "error [search.vectors_unavailable]:" in asked.stderr
    # The same store with its own embedder: no warning, and none on the wire.
    plain = runner.invoke(app, ["search", "add", "--data-dir", data, "--json"])
    assert plain.stderr == "" and "warnings" not in json.loads(plain.stdout)
