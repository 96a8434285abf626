"""Context faults over a real repository: path hints, symbols, budgets and scope."""

from collections.abc import Callable
from pathlib import Path

import pytest

from lattice_runtime.compile.task import TaskIR
from lattice_runtime.errors import BudgetExhaustedError, ContextError
from lattice_runtime.kernel import REPO_ID, ContextKernel
from lattice_runtime.protocol.messages import ContextRequestItem

Task = Callable[..., TaskIR]


def _ask(path: str | None = None, symbol: str | None = None) -> ContextRequestItem:
    return ContextRequestItem("to see how it is used", path_hint=path, symbol=symbol)


@pytest.mark.parametrize(
    ("hint", "path"),
    [
        ("src/vault/audit.py", "src/vault/audit.py"),
        ("./src/vault/audit.py", "src/vault/audit.py"),
        ("vault/login.py", "src/vault/login.py"),  # a tail of the path
        ("audit.py", "src/vault/audit.py"),  # the file name
        ("AUDIT", "src/vault/audit.py"),  # part of the path, any case
        ("src/vault/logn.py", "src/vault/login.py"),  # a typo
    ],
)
def test_a_path_hint_is_granted_as_the_exact_or_best_matching_file(
    vault: Path, task: Task, hint: str, path: str
) -> None:
    with ContextKernel.open(vault, task()) as kernel:
        grant = kernel.fault([_ask(hint)])
        (page,) = grant.pages
        assert (page.path, page.reason, page.kind) == (path, "requested path", "file")
        assert page.content == (vault / path).read_text()
        assert page.provenance[0] == "context_request (to see how it is used)"
        assert grant.faults_used == 1 and grant.refused == ()
        assert kernel.pages() == (page,)


def test_a_symbol_is_granted_as_a_page_of_its_defining_file(vault: Path, task: Task) -> None:
    with ContextKernel.open(vault, task()) as kernel:
        grant = kernel.fault([_ask(symbol="record_event"), _ask("login", "login")])
    audit, login = grant.pages
    assert (audit.path, audit.reason, audit.symbol) == (
        "src/vault/audit.py",
        "requested symbol",
        "src.vault.audit.record_event",
    )
    assert (login.path, login.symbol) == ("src/vault/login.py", "src.vault.login.login")
    assert grant.faults_used == 1


def test_each_fault_is_recorded_with_what_was_asked_granted_and_refused(
    vault: Path, task: Task
) -> None:
    with ContextKernel.open(vault, task()) as kernel:
        first = kernel.fault([_ask("src/vault/audit.py"), _ask(symbol="no_such_thing")])
        second = kernel.fault([_ask("nothing/like/this.rs")])
        records = kernel.faults()
    assert (first.faults_used, second.faults_used) == (1, 2)
    assert first.refused == ("symbol 'no_such_thing': no definition of 'no_such_thing' is indexed",)
    assert second.pages == ()
    assert second.refused == ("path 'nothing/like/this.rs': no indexed file matches the path",)
    assert [r.number for r in records] == [1, 2]
    assert records[0].requests == (_ask("src/vault/audit.py"), _ask(symbol="no_such_thing"))
    assert records[0].granted == (first.pages[0].id,)
    assert records[0].refused == first.refused
    assert records[1].granted == ()


def test_faults_past_the_budget_raise_budget_exhausted(vault: Path, task: Task) -> None:
    with ContextKernel.open(vault, task(context_faults=2)) as kernel:
        kernel.fault([_ask("audit.py")])
        kernel.fault([_ask("login.py")])
        with pytest.raises(BudgetExhaustedError) as caught:
            kernel.fault([_ask("README.md")])
        assert caught.value.code == "lattice.budget_exhausted"
        assert len(kernel.faults()) == 2
        assert "README.md" not in {page.path for page in kernel.pages()}


def test_an_empty_context_request_is_refused(vault: Path, task: Task) -> None:
    with ContextKernel.open(vault, task()) as kernel, pytest.raises(ContextError):
        kernel.fault([])


def test_a_fault_grants_only_within_the_remaining_tokens_and_pages(vault: Path, task: Task) -> None:
    with ContextKernel.open(vault, task(context_tokens=40, pages=2)) as kernel:
        grant = kernel.fault([_ask("clock.py"), _ask("src/vault/tokens.py")])
        assert [page.path for page in grant.pages] == ["src/vault/clock.py"]
        (refusal,) = grant.refused
        assert refusal.startswith("path 'src/vault/tokens.py': file:src/vault/tokens.py:")
        assert refusal.endswith(f"needs 73 tokens; {40 - grant.tokens_used} are left")
        grant = kernel.fault([_ask("audit.py"), _ask("login.py")])
        assert [page.path for page in grant.pages] == ["src/vault/audit.py"]
        assert grant.refused == ("path 'login.py': the page budget (2 pages) is spent",)
        assert kernel.tokens_used == grant.tokens_used <= 40


def test_a_page_already_granted_is_not_granted_twice(vault: Path, task: Task) -> None:
    with ContextKernel.open(vault, task()) as kernel:
        initial = kernel.initial_grant()
        granted = {page.path: page.id for page in initial.pages}
        grant = kernel.fault([_ask("tests/test_tokens.py")])
    assert grant.pages == ()
    assert grant.refused == (
        f"path 'tests/test_tokens.py': already granted as {granted['tests/test_tokens.py']}",
    )
    assert grant.tokens_used == initial.tokens_used


def test_scope_excludes_files_from_the_initial_set_the_map_and_faults(
    vault: Path, task: Task
) -> None:
    with ContextKernel.open(vault, task(exclude=("docs/**", "src/vault/clock.py"))) as kernel:
        initial = kernel.initial_grant()
        refused = kernel.fault([_ask("docs/tokens.md"), _ask(symbol="now")])
    paths = {page.path for page in initial.pages}
    assert "tests/test_tokens.py" in paths
    assert not paths & {"docs/tokens.md", "src/vault/clock.py"}
    assert "docs/" not in initial.repo_map and "clock.py" not in initial.repo_map
    assert refused.pages == ()
    assert refused.refused == (
        "path 'docs/tokens.md': docs/tokens.md is outside the task's scope",
        "symbol 'now': src/vault/clock.py is outside the task's scope",
    )


def test_scope_include_limits_every_page_to_the_included_paths(vault: Path, task: Task) -> None:
    with ContextKernel.open(vault, task(include=("src/**",))) as kernel:
        grant = kernel.initial_grant()
    assert {page.path for page in grant.pages} == {"src/vault/tokens.py"}
    assert all(line.startswith("src/") for line in grant.repo_map.splitlines())


def _big_module(path: Path) -> str:
    body = [f"LIMIT_{i:04d} = {i}  # one of many limits of the module\n" for i in range(200)]
    body.insert(150, "\n\ndef rotate_signing_key(key):\n    return key[::-1]\n\n\n")
    path.write_text("".join(body))
    return "".join(body)


def test_a_whole_file_over_the_tokens_left_is_served_as_a_slice_instead(
    vault: Path, task: Task
) -> None:
    text = _big_module(vault / "src/vault/limits.py")
    assert 6_000 < len(text) <= 12_000
    with ContextKernel.open(vault, task()) as kernel:
        whole_tokens = kernel.index.workspace.page(REPO_ID, "src/vault/limits.py").token_count
    with ContextKernel.open(vault, task(context_tokens=whole_tokens - 1)) as kernel:
        (page,) = kernel.fault([_ask(symbol="rotate_signing_key")]).pages
    assert page.kind == "slice" and page.token_count < whole_tokens
    assert "def rotate_signing_key(key):" in page.content


def test_a_slice_of_a_file_granted_whole_is_not_granted_again(vault: Path, task: Task) -> None:
    _big_module(vault / "src/vault/limits.py")
    with ContextKernel.open(vault, task()) as kernel:
        whole_tokens = kernel.index.workspace.page(REPO_ID, "src/vault/limits.py").token_count
    with ContextKernel.open(vault, task(context_tokens=whole_tokens + 50)) as kernel:
        (whole,) = kernel.fault([_ask("src/vault/limits.py")]).pages
        grant = kernel.fault([_ask(symbol="rotate_signing_key")])
    assert whole.kind == "file"
    assert grant.pages == ()
    assert grant.refused == (f"symbol 'rotate_signing_key': already granted as {whole.id}",)


def test_a_request_naming_neither_a_path_nor_a_symbol_is_refused(vault: Path, task: Task) -> None:
    with ContextKernel.open(vault, task()) as kernel:
        grant = kernel.fault([ContextRequestItem("anything")])
    assert grant.refused == ("an empty request: the request names neither a path nor a symbol",)
