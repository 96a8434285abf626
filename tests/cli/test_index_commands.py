import json
import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from repocontext.cli import app
from repocontext.store import Store
from repocontext.testing import make_repo

runner = CliRunner()


FILES = {
    "src/calc.py": (
        "def add(a, b):\n    return a + b\n\n\nclass Calc:\n    def twice(self, x):\n"
        "        return add(x, x)\n"
    ),
    "test_calc.py": "from src.calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    "notes.txt": "hello\n",
}


def invoke(*args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


def test_index_then_status_outline_related_and_changed_with_json(tmp_path):
    repo = make_repo(tmp_path / "calc", FILES)
    data = str(tmp_path / "data")
    status = json.loads(invoke("index", str(repo), "--data-dir", data, "--json"))
    assert status["status"] == "completed"
    assert status["counters"]["filesAdded"] == 3
    again = json.loads(invoke("status", "--data-dir", data, "--json"))
    assert again["attempt"] == 1
    outline = json.loads(invoke("outline", "src/calc.py", "--data-dir", data, "--json"))
    assert [s["name"] for s in outline["symbols"]] == ["add", "Calc"]
    related = json.loads(invoke("related", "src/calc.py", "--data-dir", data, "--json"))
    assert [t["path"] for t in related["coveringTests"]] == ["test_calc.py"]
    (repo / "notes.txt").write_text("changed\n")
    changed = json.loads(invoke("changed", "--data-dir", data, "--json"))
    assert changed["updated"] == ["notes.txt"]
    # The objects of the MCP tools, field for field (camelCase).
    assert {"repoId", "startedAt", "finishedAt", "elapsedMs"} <= status.keys()
    assert {
        "exists",
        "language",
        "tokenCount",
        "symbols",
        "syntaxErrors",
        "symbolCount",
        "truncated",
    } == outline.keys()
    assert outline["syntaxErrors"] is False
    assert (outline["symbolCount"], outline["truncated"]) == (3, False)  # add, Calc, twice
    capped = json.loads(
        invoke("outline", "src/calc.py", "--data-dir", data, "--json", "--max-symbols", "2")
    )
    assert [s["name"] for s in capped["symbols"]] == ["add", "Calc"]
    assert "children" not in capped["symbols"][1] and capped["truncated"] is True
    assert {
        "exists",
        "imports",
        "references",
        "dependents",
        "coveringTests",
        "truncated",
        "nextOffset",
    } == related.keys()
    assert {"added", "updated", "removed", "impacted", "checkedFiles", "elapsedMs"} == (
        changed.keys()
    )


def test_text_output_is_readable(tmp_path):
    repo = make_repo(tmp_path / "calc", FILES)
    (repo / "src" / "broken.py").write_text("def fine():\n    pass\n\n\ndef broken(:\n")
    data = str(tmp_path / "data")
    assert "completed" in invoke("index", str(repo), "--data-dir", data, "--exclude", "notes.txt")
    assert "filesSeen: 3" in invoke("status", "--repo-id", "calc", "--data-dir", data)
    text = invoke("outline", "src/calc.py", "--data-dir", data)
    assert "class Calc" in text and "method twice" in text and "src.calc.Calc.twice" in text
    assert "syntax errors" not in text
    broken = invoke("outline", "src/broken.py", "--data-dir", data)
    assert "function fine" in broken and "(syntax errors: the outline may miss" in broken
    as_json = json.loads(invoke("outline", "src/broken.py", "--data-dir", data, "--json"))
    assert as_json["syntaxErrors"] is True
    assert "test_calc.py" in invoke("related", "src/calc.py", "--data-dir", data)
    (repo / "src" / "new.py").write_text("x = 1\n")
    assert "A src/new.py" in invoke("changed", "src", "--data-dir", data)
    assert invoke("outline", "missing.py", "--data-dir", data).strip() == "not indexed"


def test_errors_exit_non_zero_with_a_code_and_hint(tmp_path):
    data = str(tmp_path / "data")
    for command in (["status"], ["outline", "a.py"], ["changed"], ["repos", "list"]):
        # a mistyped --data-dir is an error, and leaves no stray store behind
        result = runner.invoke(app, [*command, "--data-dir", data])
        assert result.exit_code == 1, command
        assert "error [store.not_found]" in result.output and "--data-dir" in result.output
        assert not (tmp_path / "data").exists()
    repo = make_repo(tmp_path / "calc", FILES)
    invoke("index", str(repo), "--data-dir", data)
    invoke("repos", "remove", "calc", "--data-dir", data)
    result = runner.invoke(app, ["status", "--data-dir", data])
    assert result.exit_code == 1
    assert "error [input.invalid]" in result.output and "hint:" in result.output
    missing = runner.invoke(app, ["status", "--repo-id", "nope", "--data-dir", data])
    assert missing.exit_code == 1 and "repo.not_found" in missing.output
    root = runner.invoke(app, ["index", "/", "--data-dir", data])
    assert root.exit_code == 1 and "path.dangerous_root" in root.output


def test_index_sweeps_the_store_so_the_change_feed_stays_bounded(tmp_path, monkeypatch):
    repo = tmp_path / "many"
    (repo / "pkg").mkdir(parents=True)
    for i in range(250):
        body = "".join(f"def f{i}_{j}(x):\n    return x + {j}\n\n\n" for j in range(3))
        (repo / "pkg" / f"m{i}.py").write_text(body)
    data = tmp_path / "data"
    monkeypatch.setenv("REPOCONTEXT_FEED_MAX_EVENTS", "1000")
    status = json.loads(invoke("index", str(repo), "--data-dir", str(data), "--json"))
    assert status["counters"]["filesAdded"] == 250
    with Store.open(data) as store:
        assert (store.feed_floor(), store.last_seq() > 1000) == (0, True)  # swept first
    invoke("index", str(repo), "--data-dir", str(data), "--json")  # a no-change rerun
    with Store.open(data) as store:
        # at most the cap, plus the few status writes of the rerun itself
        assert store.feed_floor() > 0 and store.last_seq() - store.feed_floor() <= 1000 + 10


def test_a_rerun_keeps_the_filters_and_the_size_cap_comes_from_the_settings(tmp_path, monkeypatch):
    repo = make_repo(tmp_path / "calc", FILES)
    data = str(tmp_path / "data")
    first = json.loads(
        invoke("index", str(repo), "--exclude", "*.txt", "--data-dir", data, "--json")
    )
    assert first["counters"]["filesSeen"] == 2
    again = json.loads(invoke("index", str(repo), "--data-dir", data, "--json"))
    assert again["counters"]["filesSeen"] == 2 and again["counters"]["filesRemoved"] == 0
    monkeypatch.setenv("REPOCONTEXT_MAX_FILE_BYTES", "40")
    capped = json.loads(invoke("index", str(repo), "--no-filters", "--data-dir", data, "--json"))
    assert capped["counters"]["filesSeen"] == 3
    outline = json.loads(invoke("outline", "src/calc.py", "--data-dir", data, "--json"))
    assert outline["symbols"] == []  # over the 40-byte cap: a node without content


def test_an_empty_path_is_refused(tmp_path):
    result = runner.invoke(app, ["index", "", "--data-dir", str(tmp_path / "data")])
    assert result.exit_code == 1 and "input.invalid" in result.output


def test_an_empty_repo_id_is_refused_and_unknown_languages_read_plainly(tmp_path):
    repo = make_repo(tmp_path / "calc", FILES)
    data = str(tmp_path / "data")
    invoke("index", str(repo), "--data-dir", data)
    result = runner.invoke(app, ["status", "--repo-id", "", "--data-dir", data])
    assert result.exit_code == 1 and "input.invalid" in result.output
    assert invoke("outline", "notes.txt", "--data-dir", data).startswith("unknown language ·")


def test_an_invalid_setting_is_one_error_line_with_a_hint(tmp_path, monkeypatch):
    monkeypatch.setenv("REPOCONTEXT_MAX_FILE_BYTES", "abc")
    result = runner.invoke(app, ["status", "--data-dir", str(tmp_path / "data")])
    assert result.exit_code == 2
    first, hint = result.output.strip().splitlines()
    assert first.startswith("error [input.invalid]: invalid setting: max_file_bytes:")
    assert hint.startswith("hint: ")


def test_a_file_that_cannot_be_read_now_keeps_its_node(tmp_path):
    repo = make_repo(tmp_path / "calc", FILES)
    data = str(tmp_path / "data")
    invoke("index", str(repo), "--data-dir", data)
    target = repo / "src" / "calc.py"
    target.write_text("def other():\n    pass\n")  # changed on disk, then unreadable
    target.chmod(0)
    command = [sys.executable, "-m", "repocontext", "index", str(repo), "--data-dir", data]
    if os.geteuid() == 0:  # root reads anything: drop the capabilities that let it
        command = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", *command]
    try:
        run = subprocess.run(
            [*command, "--json"],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "REPOCONTEXT_EMBEDDER": "off"},
        )
    finally:
        target.chmod(0o644)
    status = json.loads(run.stdout)
    assert {"path": "src/calc.py", "reason": "unreadable: Permission denied"} in status["issues"]
    assert status["counters"]["filesRemoved"] == 0
    outline = json.loads(invoke("outline", "src/calc.py", "--data-dir", data, "--json"))
    assert [s["name"] for s in outline["symbols"]] == ["add", "Calc"]  # the last version read


def test_reading_commands_work_on_a_store_they_cannot_write(tmp_path):
    repo = make_repo(tmp_path / "calc", FILES)
    data = tmp_path / "data"
    invoke("index", str(repo), "--data-dir", str(data))
    cli = [str(Path(sys.executable).parent / "repocontext")]
    if os.geteuid() == 0:  # root writes anything: drop the capabilities that let it
        cli = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", *cli]
    store = data / "store"
    store.chmod(0o555)  # the directory is read-only; LMDB's lock.mdb stays writable
    try:
        shown = subprocess.run(
            [*cli, "outline", "src/calc.py", "--data-dir", str(data)],
            capture_output=True,
            text=True,
        )
        assert shown.returncode == 0, shown.stderr
        assert "class Calc" in shown.stdout
        (store / "lock.mdb").chmod(0o444)  # now nothing of the store can be written
        refused = subprocess.run(
            [*cli, "status", "--data-dir", str(data)], capture_output=True, text=True
        )
        assert refused.returncode == 1
        assert "store.read_only" in refused.stdout + refused.stderr
        assert "lock.mdb" in refused.stdout + refused.stderr
    finally:
        store.chmod(0o755)
        (store / "lock.mdb").chmod(0o644)


def test_status_of_a_completed_run_names_no_phase_after_a_first_run_or_a_rerun(tmp_path):
    repo = make_repo(tmp_path / "calc", FILES)
    data = str(tmp_path / "data")
    first = json.loads(invoke("index", str(repo), "--data-dir", data, "--json"))
    assert (first["status"], first["phase"]) == ("completed", None)  # not "applying"
    (repo / "src" / "calc.py").write_text("def add(a, b):\n    return b + a\n")
    invoke("index", str(repo), "--data-dir", data, "--json")
    status = json.loads(invoke("status", "--data-dir", data, "--json"))
    assert (status["status"], status["phase"], status["attempt"]) == ("completed", None, 2)
    text = invoke("status", "--data-dir", data)
    assert text.startswith("calc: completed (attempt 2, ") and "phase" not in text
