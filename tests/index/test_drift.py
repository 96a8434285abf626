import pytest

from repocontext.errors import PathOutsideWorkspaceError
from repocontext.index.walk import WalkOptions


def test_changed_reports_added_updated_removed_and_the_impacted_files(workspace, repo):
    workspace.bootstrap(repo, background=False)
    clean = workspace.index.changed("demo")
    assert (clean.added, clean.updated, clean.removed) == ([], [], [])
    assert clean.checked_files > 5
    (repo / "pkg/util.py").write_text("def parse(text):\n    return []\n")
    (repo / "pkg/extra.py").write_text("x = 1\n")
    (repo / "web/lib/index.js").unlink()
    report = workspace.index.changed("demo")
    assert report.added == ["pkg/extra.py"]
    assert report.updated == ["pkg/util.py"]
    assert report.removed == ["web/lib/index.js"]
    impacted = {item.path: item.reason for item in report.impacted}
    assert "pkg/app.py" in impacted and "depends on pkg/util.py" in impacted["pkg/app.py"]
    assert (
        "tests/test_util.py" in impacted and "covers pkg/util.py" in impacted["tests/test_util.py"]
    )
    assert "web/index.js" in impacted


def test_a_touched_but_identical_file_is_not_reported(workspace, repo):
    workspace.bootstrap(repo, background=False)
    target = repo / "pkg/app.py"
    target.write_text(target.read_text())
    assert workspace.index.changed("demo").updated == []


def test_changed_can_be_scoped_to_a_directory_or_file(workspace, repo):
    workspace.bootstrap(repo, background=False)
    (repo / "pkg/util.py").write_text("y = 2\n")
    (repo / "web/new.js").write_text("export const a = 1;\n")
    assert workspace.index.changed("demo", "web").added == ["web/new.js"]
    assert workspace.index.changed("demo", "web").updated == []
    assert workspace.index.changed("demo", "pkg/util.py").updated == ["pkg/util.py"]


@pytest.mark.parametrize("scope", ["../", "/etc", "pkg/../../.."])
def test_scopes_outside_the_indexed_root_are_refused(workspace, repo, scope):
    workspace.bootstrap(repo, background=False)
    with pytest.raises(PathOutsideWorkspaceError) as info:
        workspace.index.changed("demo", scope)
    assert info.value.code == "path.outside_workspace"


def test_changed_uses_the_filters_the_repository_was_indexed_with(workspace, repo):
    workspace.bootstrap(repo, options=WalkOptions(include_globs=("pkg/**",)), background=False)
    (repo / "web/new.js").write_text("x\n")
    assert workspace.index.changed("demo").added == []
