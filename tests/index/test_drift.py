import json
import os
import shutil
import subprocess
import sys

import pytest

from repocontext.errors import PathOutsideWorkspaceError
from repocontext.index.files.nodes import load_file_nodes
from repocontext.index.files.walk import WalkOptions


def test_changed_reports_added_updated_removed_and_the_impacted_files(workspace, repo):
    workspace.bootstrap(repo, background=False)
    clean = workspace.changed("demo")
    assert (clean.added, clean.updated, clean.removed) == ([], [], [])
    assert clean.checked_files > 5
    (repo / "pkg/util.py").write_text("def parse(text):\n    return []\n")
    (repo / "pkg/extra.py").write_text("x = 1\n")
    (repo / "web/lib/index.js").unlink()
    report = workspace.changed("demo")
    assert report.added == ["pkg/extra.py"]
    assert report.updated == ["pkg/util.py"]
    assert report.removed == ["web/lib/index.js"]
    impacted = {item.path: item.reason for item in report.impacted}
    assert "pkg/app.py" in impacted and "depends on pkg/util.py" in impacted["pkg/app.py"]
    assert (
        "tests/test_util.py" in impacted and "covers pkg/util.py" in impacted["tests/test_util.py"]
    )
    assert "web/index.js" in impacted


def test_a_test_covering_one_changed_file_is_reported_as_covering_it(workspace, repo):
    # BetaTests depends on Alpha.cs (its namespace import) and covers Beta.cs; Alpha sorts
    # first, and its dependent must not hide the covering reason.
    (repo / "src").mkdir()
    (repo / "src/Alpha.cs").write_text("namespace Lib;\nclass Alpha { }\n")
    (repo / "src/Beta.cs").write_text("namespace Lib;\nclass Beta { public int Run() => 1; }\n")
    (repo / "tests/BetaTests.cs").write_text(
        "using Lib;\nclass BetaTests { void T() { new Beta().Run(); } }\n"
    )
    workspace.bootstrap(repo, background=False)
    (repo / "src/Alpha.cs").write_text("namespace Lib;\nclass Alpha { int x; }\n")
    (repo / "src/Beta.cs").write_text("namespace Lib;\nclass Beta { public int Run() => 2; }\n")
    impacted = {item.path: item.reason for item in workspace.changed("demo").impacted}
    assert impacted["tests/BetaTests.cs"].startswith("covers src/Beta.cs (")


def test_a_touched_but_identical_file_is_not_reported(workspace, repo):
    workspace.bootstrap(repo, background=False)
    target = repo / "pkg/app.py"
    target.write_text(target.read_text())
    assert workspace.changed("demo").updated == []


def test_changed_can_be_scoped_to_a_directory_or_file(workspace, repo):
    workspace.bootstrap(repo, background=False)
    (repo / "pkg/util.py").write_text("y = 2\n")
    (repo / "web/new.js").write_text("export const a = 1;\n")
    assert workspace.changed("demo", "web").added == ["web/new.js"]
    assert workspace.changed("demo", "web").updated == []
    assert workspace.changed("demo", "pkg/util.py").updated == ["pkg/util.py"]


def test_a_scope_is_a_path_not_a_string_prefix(workspace, repo):
    (repo / "pkg/sub").mkdir()
    (repo / "pkg/sub/deep.py").write_text("d = 1\n")
    (repo / "pkg/subway.py").write_text("s = 1\n")
    (repo / "pkg/util.pyi").write_text("def parse(text: str) -> list[str]: ...\n")
    workspace.bootstrap(repo, background=False)
    for name in ("pkg/subway.py", "pkg/util.pyi", "pkg/util.py"):
        (repo / name).write_text("changed = 1\n")
    assert workspace.changed("demo", "pk").updated == []  # no such path
    assert workspace.changed("demo", "pkg/util").updated == []
    assert workspace.changed("demo", "pkg/util.py").updated == ["pkg/util.py"]
    # A directory deleted since the index: its files, not its name's string prefix.
    (repo / "pkg/sub/deep.py").unlink()
    (repo / "pkg/sub").rmdir()
    report = workspace.changed("demo", "pkg/sub")
    assert (report.removed, report.updated) == (["pkg/sub/deep.py"], [])


def test_files_the_index_skips_are_no_change(workspace, repo):
    (repo / "bad\nname.py").write_text("x = 1\n")
    workspace.bootstrap(repo, background=False)
    assert workspace.index_status("demo").issues == [
        {"path": "bad\nname.py", "reason": "invalid_path"}
    ]
    report = workspace.changed("demo")
    assert (report.added, report.updated, report.removed) == ([], [], [])


@pytest.mark.parametrize("scope", ["../", "/etc", "pkg/../../.."])
def test_scopes_outside_the_indexed_root_are_refused(workspace, repo, scope):
    workspace.bootstrap(repo, background=False)
    with pytest.raises(PathOutsideWorkspaceError) as info:
        workspace.changed("demo", scope)
    assert info.value.code == "path.outside_workspace"


def test_changed_uses_the_filters_the_repository_was_indexed_with(workspace, repo):
    workspace.bootstrap(repo, options=WalkOptions(include_globs=("pkg/**",)), background=False)
    (repo / "web/new.js").write_text("x\n")
    assert workspace.changed("demo").added == []


def test_an_indexed_file_that_cannot_be_read_now_is_neither_updated_nor_removed(workspace, repo):
    workspace.bootstrap(repo, background=False)
    target = repo / "pkg/util.py"
    target.write_text("def changed():\n    pass\n")
    target.chmod(0)
    try:
        out = unprivileged(workspace, repo, "r = ws.changed('demo')")
    finally:
        target.chmod(0o644)
    assert out == [[], [], []]


@pytest.mark.parametrize("git_listing", [True, False])
def test_the_files_of_a_directory_that_cannot_be_listed_now_are_kept(workspace, repo, git_listing):
    if not git_listing:
        shutil.rmtree(repo / ".git")  # a plain walk
    (repo / "pkg/untracked.py").write_text("x = 1\n")  # git lists it only while it can look
    workspace.bootstrap(repo, background=False)
    assert workspace.outline("demo", "pkg/untracked.py").exists
    sealed = repo / "pkg"
    sealed.chmod(0)
    try:
        changed = unprivileged(workspace, repo, "r = ws.changed('demo')")
        rerun = unprivileged(
            workspace,
            repo,
            "p = ws.bootstrap(Path(sys.argv[2]) / 'demo', 'demo', background=False);"
            "r = ws.changed('demo')",
        )
    finally:
        sealed.chmod(0o755)
    assert changed == [[], [], []]
    assert rerun == [[], [], []]
    assert workspace.outline("demo", "pkg/util.py").exists  # still indexed
    assert workspace.outline("demo", "pkg/untracked.py").exists


def unprivileged(workspace, repo, statement: str) -> list[list[str]]:
    """Run ``statement`` (binding ``r`` to a drift report) in a second process that the
    file modes apply to; return ``[added, updated, removed]``."""
    script = (
        "import json, sys; from pathlib import Path;"
        "from repocontext.settings import Settings;"
        "from repocontext.workspace import Workspace;"
        "s = Settings(data_dir=Path(sys.argv[1]), workspace_root=Path(sys.argv[2]),"
        " embedder='off');"
        f"ws = Workspace.open(s); {statement};"
        "print(json.dumps([r.added, r.updated, r.removed])); ws.close()"
    )
    data_dir = workspace.settings.data_dir  # (opened by a second process too: LMDB)
    command = [sys.executable, "-c", script, str(data_dir), str(repo.parent)]
    if os.geteuid() == 0:  # root reads anything: drop the capabilities that let it
        command = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", *command]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    return json.loads(out.splitlines()[-1])


def test_a_symlink_scope_is_the_link_itself_not_its_target(workspace, repo, tmp_path):
    workspace.bootstrap(repo, background=False)
    (repo / "dangling.py").symlink_to(repo / "pkg/gone.py")
    (repo / "out.py").symlink_to(tmp_path / "elsewhere.py")
    (repo / "pkg/util.py").write_text("def edited():\n    pass\n")
    for link in ("dangling.py", "out.py"):  # reported by the walk, skipped: nothing changed
        report = workspace.changed("demo", link)
        assert (report.added, report.updated, report.removed) == ([], [], []), link
    with pytest.raises(PathOutsideWorkspaceError):  # a directory on the way still counts
        workspace.changed("demo", "pkg/../../elsewhere.py")


def test_a_file_too_deep_for_its_link_records_still_answers_related(workspace, repo):
    deep = "/".join(["d"] * 120) + "/m.py"
    (repo / deep).parent.mkdir(parents=True)
    (repo / deep).write_text("from pkg.util import parse\n")
    workspace.bootstrap(repo, background=False)
    related = workspace.related("demo", deep)
    assert related.exists and related.imports == ()  # computed, but no key holds them
    assert workspace.outline("demo", deep).exists
    (repo / deep).write_text("import os\n")
    assert workspace.changed("demo").updated == [deep]


def test_a_file_that_turned_binary_is_reported_removed_as_a_run_drops_it(workspace, repo):
    workspace.bootstrap(repo, background=False)
    (repo / "pkg/util.py").write_bytes(b"\x00\x01 now binary")
    report = workspace.changed("demo")
    assert (report.updated, report.removed) == ([], ["pkg/util.py"])
    status = workspace.bootstrap(repo, background=False)
    assert status.counters["filesRemoved"] == 1
    clean = workspace.changed("demo")
    assert (clean.added, clean.updated, clean.removed) == ([], [], [])


def test_a_symlinked_directory_is_never_walked_into_by_a_scope(workspace, repo, tmp_path):
    shutil.rmtree(repo / ".git")  # a plain walk (git never follows a link)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("PASSWORD = 'hunter2'\n")
    workspace.bootstrap(repo, background=False)
    (repo / "ext").symlink_to(outside)
    for scope in ("ext", "ext/"):
        assert workspace.changed("demo", scope).added == []
    workspace.refresh("demo", ["ext", "ext/secret.py"])
    assert not workspace.outline("demo", "ext/secret.py").exists
    nodes = load_file_nodes(workspace.store, "demo")
    assert not any(path.startswith("ext") for path in nodes)
