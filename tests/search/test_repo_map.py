"""The repository map on a real indexed repository: ranking, symbols, budget, exclude, query."""

import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repocontext.errors import InvalidInputError, NotFoundError
from repocontext.search.repo_map import RefGraph, RepoMapEntry, render_entries
from repocontext.settings import Settings
from repocontext.tokens import count_tokens
from repocontext.workspace import Workspace

CORE = """\
class Engine:
    def start(self):
        return 1

    def stop(self):
        return 0

    def _tick(self):
        return 2


def helper(x):
    return x


def _hidden():
    return 3


def rarely_used():
    return 4
"""


def user(name: str) -> str:
    return (
        "from pkg.core import Engine, helper\n\n\n"
        f"def use_{name}():\n    engine = Engine()\n    engine.start()\n    return helper(1)\n"
    )


def make_repo(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "core.py").write_text(CORE)
    for name in ("a", "b", "c", "d"):
        (root / "pkg" / f"user_{name}.py").write_text(user(name))
    (root / "pkg" / "chain1.py").write_text(
        "from pkg.chain2 import step_two\n\n\ndef step_one():\n    return step_two()\n"
    )
    (root / "pkg" / "chain2.py").write_text(
        "from pkg.chain3 import step_three\n\n\ndef step_two():\n    return step_three()\n"
    )
    (root / "pkg" / "chain3.py").write_text("def step_three():\n    return 3\n")
    (root / "alpha_leaf.py").write_text("def lonely_widget():\n    return 0\n")
    (root / "zeta_leaf.py").write_text("def other_gadget():\n    return 0\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def open_workspace(tmp: Path, encoding: str = "o200k_base") -> Workspace:
    settings = Settings(
        data_dir=tmp / "data",
        workspace_root=tmp / "ws",
        reconcile="off",
        embedder="off",
        token_encoding=encoding,
    )
    return Workspace.open(settings)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("repo-map")
    repo = make_repo(tmp / "ws" / "proj")
    with open_workspace(tmp) as opened:
        opened.bootstrap(repo, "proj", background=False)
        yield opened


def paths(workspace: Workspace, **kwargs) -> list[str]:
    return [e.path for e in workspace.repo_map("proj", 4000, **kwargs).entries]


def test_a_heavily_referenced_module_outranks_its_users_and_the_leaves(workspace):
    order = paths(workspace)
    assert order[0] == "pkg/core.py"
    for other in ("pkg/user_a.py", "alpha_leaf.py", "zeta_leaf.py"):
        assert order.index("pkg/core.py") < order.index(other)


def test_rank_flows_down_an_import_chain_to_the_file_without_links(workspace):
    order = paths(workspace)
    assert (
        order.index("pkg/chain3.py") < order.index("pkg/chain2.py") < order.index("pkg/chain1.py")
    )


def test_files_of_equal_rank_are_listed_in_path_order(workspace):
    order = paths(workspace)
    assert order.index("alpha_leaf.py") < order.index("zeta_leaf.py")
    users = [p for p in order if p.startswith("pkg/user_")]
    assert users == sorted(users)
    assert order == paths(workspace)  # and the same map twice


def test_symbols_come_most_used_first_without_private_names(workspace):
    [core] = [e for e in workspace.repo_map("proj", 4000).entries if e.path == "pkg/core.py"]
    assert core.symbols[:2] == ("Engine", "helper")  # used by four files each; a type first
    assert core.symbols.index("Engine.start") < core.symbols.index("rarely_used")
    assert "Engine.stop" in core.symbols
    assert not any("_tick" in s or "_hidden" in s for s in core.symbols)
    assert core.line == f"pkg/core.py: {', '.join(core.symbols)}"


def test_a_file_lists_at_most_eight_symbols(tmp_path):
    repo = tmp_path / "ws" / "many"
    repo.mkdir(parents=True)
    (repo / "wide.py").write_text(
        "".join(f"def function_{i}():\n    return {i}\n\n\n" for i in range(20))
    )
    with open_workspace(tmp_path) as workspace:
        workspace.bootstrap(repo, "many", background=False)
        [entry] = workspace.repo_map("many", 1000).entries
    assert len(entry.symbols) == 8
    assert entry.symbols[0] == "function_0"  # unused alike: larger, then earlier first


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(budget=st.integers(1, 400))
def test_the_map_never_costs_more_than_its_budget_and_stops_at_the_first_misfit(workspace, budget):
    full = workspace.repo_map("proj", 16_000)
    fitted = workspace.repo_map("proj", budget)
    assert fitted.token_count <= budget
    assert fitted.token_count == count_tokens(fitted.text)
    assert fitted.entries == full.entries[: len(fitted.entries)]
    assert fitted.truncated == (len(fitted.entries) < full.files)
    if fitted.truncated:
        one_more = full.entries[: len(fitted.entries) + 1]
        assert count_tokens(render_entries(one_more)) > budget


def test_a_budget_too_small_for_one_entry_gives_an_empty_truncated_map(workspace):
    tiny = workspace.repo_map("proj", 2)
    assert tiny.entries == ()
    assert tiny.token_count == 0
    assert tiny.truncated
    assert tiny.text == ""


def test_excluded_files_are_left_out_and_pull_their_neighbours_up(workspace):
    plain = paths(workspace)
    excluded = workspace.repo_map("proj", 4000, exclude=["pkg/chain1.py", "./alpha_leaf.py"])
    listed = [e.path for e in excluded.entries]
    assert "pkg/chain1.py" not in listed
    assert "alpha_leaf.py" not in listed
    assert excluded.files == workspace.repo_map("proj", 4000).files - 2
    # chain1 as focus: what it imports now ranks above the hub
    assert listed.index("pkg/chain2.py") < listed.index("pkg/core.py")
    assert plain.index("pkg/chain2.py") > plain.index("pkg/core.py")


def test_a_query_lifts_the_files_whose_names_share_its_terms(workspace):
    assert paths(workspace)[0] == "pkg/core.py"
    assert paths(workspace, query="fix the lonely widget")[0] == "alpha_leaf.py"
    assert paths(workspace, query="gadget")[0] == "zeta_leaf.py"
    # words that name nothing leave the unpersonalised order
    assert paths(workspace, query="the of and") == paths(workspace)


def test_a_query_puts_the_symbols_it_names_first(workspace):
    [core] = [
        e
        for e in workspace.repo_map("proj", 4000, query="rarely used").entries
        if e.path == "pkg/core.py"
    ]
    assert core.symbols[0] == "rarely_used"


def test_the_count_uses_the_workspace_encoding(tmp_path):
    repo = make_repo(tmp_path / "ws" / "proj")
    with open_workspace(tmp_path, encoding="cl100k_base") as workspace:
        workspace.bootstrap(repo, "proj", background=False)
        result = workspace.repo_map("proj", 4000)
    assert result.token_count == count_tokens(result.text, "cl100k_base")


def test_a_repository_not_indexed_yet_has_an_empty_map(tmp_path):
    repo = make_repo(tmp_path / "ws" / "proj")
    with open_workspace(tmp_path) as workspace:
        workspace.register_repo(repo, "proj")
        result = workspace.repo_map("proj", 1000)
    assert (result.entries, result.files, result.truncated) == ((), 0, False)


def test_an_unknown_repository_or_a_budget_below_one_is_refused(workspace):
    with pytest.raises(NotFoundError):
        workspace.repo_map("nope", 1000)
    with pytest.raises(InvalidInputError) as refused:
        workspace.repo_map("proj", 0)
    assert refused.value.code == "input.invalid"


def test_an_entry_without_symbols_renders_as_its_path():
    assert RepoMapEntry("docs/index.md").line == "docs/index.md"
    assert render_entries([RepoMapEntry("a.py", ("x", "y")), RepoMapEntry("b.md")]) == (
        "a.py: x, y\nb.md"
    )


def test_a_file_without_links_hands_its_rank_on_along_the_restart_vector(tmp_path):
    repo = tmp_path / "ws" / "pair"
    repo.mkdir(parents=True)
    (repo / "a.py").write_text("from b import target\n\n\ndef caller():\n    return target()\n")
    (repo / "b.py").write_text("def target():\n    return 1\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    with open_workspace(tmp_path) as workspace:
        workspace.bootstrap(repo, "pair", background=False)
        scores = RefGraph.load(workspace.store, "pair").scores()
    # a -> b, b dangling, damping 0.85, uniform restart: r_a = 0.075 + 0.425 r_b, r_a + r_b = 1
    assert scores["a.py"] == pytest.approx(0.5 / 1.425, abs=1e-9)
    assert scores["b.py"] == pytest.approx(1 - 0.5 / 1.425, abs=1e-9)
