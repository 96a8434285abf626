"""A process without a projection state takes the stored projections over (no rebuild)."""

import os
from pathlib import Path

from repocontext.index.projections.projection import PROJECTION_FORMAT, record_digest
from repocontext.index.projections.projection_writer import stored_digests
from repocontext.settings import Settings
from repocontext.store import STRUCTURAL, SYMBOL, XREF, Store
from repocontext.store.keys import family_prefix, repo_key, symbol_key, xref_key
from repocontext.workspace import Workspace

TREES = {STRUCTURAL: "pkg", SYMBOL: "symbol", XREF: "xref"}


def run(data: Path, root: Path, repo_id: str = "demo", edit=None) -> dict:
    """One indexing run in a workspace of its own (a new process's view: no state held)."""
    settings = Settings(data_dir=data, workspace_root=root.parent, embedder="off")
    with Workspace.open(settings) as workspace:
        if edit is not None:
            edit(workspace.store)
        status = workspace.bootstrap(root, repo_id, background=False)
        assert status.status == "completed"
        return status.counters


def projections(data: Path, root: Path, repo_id: str = "demo") -> dict[str, dict]:
    settings = Settings(data_dir=data, workspace_root=root.parent, embedder="off")
    with Workspace.open(settings) as workspace:
        store = workspace.store
        return {
            tree: {r.key: r.value for r in store.iter_records(tree, family_prefix(repo_id, f))}
            for tree, f in TREES.items()
        }


def tamper(key: str):
    """An edit that makes one stored record wrong while the projections stay marked clean."""

    def edit(store: Store) -> None:
        store.put(XREF, key, {"name": "tampered", "users": [], "count": 0})

    return edit


def restamp(**fields):
    def edit(store: Store) -> None:
        repo = dict(store.get(STRUCTURAL, repo_key("demo")).value)
        repo.update(fields)
        store.put(STRUCTURAL, repo_key("demo"), repo)

    return edit


def test_a_fresh_process_applies_a_change_to_the_stored_projections(repo, tmp_path):
    run(tmp_path / "a", repo)
    (repo / "pkg" / "util.py").write_text(
        "def parse(text):\n    return text.split()\n\n\ndef render(items):\n    return items\n"
    )
    (repo / "pkg" / "extra.py").write_text("from pkg.util import render\n\nrender([])\n")
    (repo / "README.md").unlink()  # the file set changes too
    # A record the change cannot affect is made wrong first: adopted, it is trusted as is.
    unrelated = xref_key("demo", "name:helper")
    counters = run(tmp_path / "a", repo, edit=tamper(unrelated))
    assert 0 < counters["projectionWrites"] < 20
    adopted = projections(tmp_path / "a", repo)
    assert adopted[XREF][unrelated]["name"] == "tampered"
    run(tmp_path / "b", repo)  # from nothing
    scratch = projections(tmp_path / "b", repo)
    adopted[XREF][unrelated] = scratch[XREF][unrelated]
    assert adopted == scratch
    assert "pkg/extra.py" in {
        d["path"] for d in scratch[XREF][xref_key("demo", "in:pkg/util.py")]["dependents"]
    }


def test_projections_of_another_format_or_marked_dirty_are_rebuilt(repo, tmp_path):
    run(tmp_path / "a", repo)
    unrelated = xref_key("demo", "name:helper")
    for stamp in ({"projectionsFormat": PROJECTION_FORMAT + 1}, {"projectionsDirty": True}):
        (repo / "pkg" / "app.py").write_text(f"# {stamp}\nfrom pkg.util import parse\n")
        settings = Settings(data_dir=tmp_path / "a", workspace_root=repo.parent, embedder="off")
        with Workspace.open(settings) as workspace:
            tamper(unrelated)(workspace.store)
            restamp(**stamp)(workspace.store)
            assert workspace.bootstrap(repo, "demo", background=False).status == "completed"
            assert workspace.store.get(XREF, unrelated).value["name"] == "helper"


def test_a_go_module_renamed_since_the_stored_build_relinks_everything(repo_factory, tmp_path):
    files = {
        "go.mod": "module example.com/m\n\ngo 1.22\n",
        "a/a.go": 'package a\n\nimport "example.com/m/b"\n\nfunc A() int { return b.B() }\n',
        "b/b.go": "package b\n\nfunc B() int { return 1 }\n",
    }
    root = repo_factory(tmp_path / "ws" / "demo", files)
    run(tmp_path / "a", root)
    before = projections(tmp_path / "a", root)
    assert [i["path"] for i in before[XREF][xref_key("demo", "out:a/a.go")]["imports"]] == [
        "b/b.go"
    ]
    (root / "go.mod").write_text("module example.com/n\n\ngo 1.22\n")
    run(tmp_path / "a", root)
    run(tmp_path / "b", root)
    after = projections(tmp_path / "a", root)
    assert after == projections(tmp_path / "b", root)
    assert after != before


def test_stored_digests_equal_the_digests_of_the_decoded_values(repo, tmp_path):
    run(tmp_path / "a", repo)
    settings = Settings(data_dir=tmp_path / "a", workspace_root=repo.parent, embedder="off")
    with Workspace.open(settings) as workspace:
        digests = stored_digests(workspace.store, "demo")
        store = workspace.store
        expected = {
            tree: {
                r.key: record_digest(r.value)
                for r in store.iter_records(tree, family_prefix("demo", f))
            }
            for tree, f in TREES.items()
        }
    assert digests == expected
    assert all(digests.values())


def test_a_twin_definition_is_read_back_when_the_other_twin_changes(repo, tmp_path):
    # pkg/dup.py and pkg/dup/__init__.py both define pkg.dup.Shared, so its record lists
    # both. A state keeps no definitions once their records are written: changing one twin,
    # a fresh process (adopted state) and a serving one (the state the build left) read the
    # other's back from its node.
    (repo / "pkg" / "dup").mkdir()
    (repo / "pkg" / "dup" / "__init__.py").write_text("class Shared:\n    pass\n")
    (repo / "pkg" / "dup.py").write_text("class Shared:\n    pass\n")
    run(tmp_path / "fresh", repo)
    settings = Settings(data_dir=tmp_path / "serving", workspace_root=repo.parent, embedder="off")
    with Workspace.open(settings) as serving:
        assert serving.bootstrap(repo, "demo", background=False).status == "completed"
        for lines in (3, 5):
            (repo / "pkg" / "dup.py").write_text("\n" * (lines - 1) + "class Shared:\n    x = 1\n")
            assert serving.bootstrap(repo, "demo", background=False).status == "completed"
            run(tmp_path / "fresh", repo)
            run(tmp_path / f"scratch{lines}", repo)
            scratch = projections(tmp_path / f"scratch{lines}", repo)
            defs = scratch[SYMBOL][symbol_key("demo", "pkg.dup.Shared")]["defs"]
            assert [(d["path"], d["startLine"]) for d in defs] == [
                ("pkg/dup.py", lines),
                ("pkg/dup/__init__.py", 1),
            ]
            assert projections(tmp_path / "fresh", repo) == scratch
            store = serving.store
            assert {
                tree: {r.key: r.value for r in store.iter_records(tree, family_prefix("demo", f))}
                for tree, f in TREES.items()
            } == scratch


def test_a_rebuilding_run_over_touched_changed_and_removed_files_equals_a_fresh_build(
    repo, tmp_path
):
    # Projections marked dirty are rebuilt by staging every stored node. Files this run
    # decides are staged once, when decided: touched (same bytes, new mtime) before the
    # first change and after it, changed (a definition dropped), removed, added.
    run(tmp_path / "a", repo)

    def touch(rel: str) -> None:
        info = (repo / rel).stat()
        os.utime(repo / rel, ns=(info.st_atime_ns, info.st_mtime_ns + 10**9))

    touch("pkg/app.py")  # walked before the first change
    (repo / "pkg" / "util.py").write_text("def parse(text):\n    return text.split()\n")
    touch("tests/test_util.py")  # walked after it
    (repo / "web" / "lib" / "index.js").unlink()
    (repo / "pkg" / "more.py").write_text("from pkg.util import parse\n\nparse('x')\n")
    counters = run(tmp_path / "a", repo, edit=restamp(projectionsDirty=True))
    assert (counters["filesTouched"], counters["filesRemoved"]) == (2, 1)
    run(tmp_path / "b", repo)
    rebuilt = projections(tmp_path / "a", repo)
    assert rebuilt == projections(tmp_path / "b", repo)
    assert symbol_key("demo", "pkg.util.Helper") not in rebuilt[SYMBOL]
    assert symbol_key("demo", "pkg.app.main") in rebuilt[SYMBOL]
    assert symbol_key("demo", "tests.test_util.test_parse") in rebuilt[SYMBOL]
