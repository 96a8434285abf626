"""The kernel over a real repository: the initial set, page ids, sizes and staleness."""

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from lattice_runtime.compile.task import TaskIR
from lattice_runtime.errors import ContextError, StalePageError
from lattice_runtime.kernel import (
    REPO_ID,
    SLICE_CHARS,
    ContextKernel,
    index_settings,
)
from lattice_runtime.protocol.messages import ContextRequestItem
from repocontext.testing import make_repo

Task = Callable[..., TaskIR]


def test_the_initial_set_starts_with_the_relevant_test_then_its_import_then_one_hop(
    vault: Path, task: Task
) -> None:
    with ContextKernel.open(vault, task()) as kernel:
        grant = kernel.initial_grant()
    order = [(page.path, page.reason) for page in grant.pages]
    assert order[:3] == [
        ("tests/test_tokens.py", "test"),
        ("src/vault/tokens.py", "imported by test"),
        ("src/vault/clock.py", "import hop"),
    ]
    assert all(reason == "search hit" for _, reason in order[3:])
    assert "tests/test_login.py" not in dict(order)  # a test that is not about the goal
    first, source, hop = grant.pages[:3]
    assert first.is_test and not source.is_test
    assert "imported by tests/test_tokens.py (python import vault.tokens)" in source.provenance
    assert hop.provenance[0].startswith("imported by src/vault/tokens.py")
    assert source.symbol == "src.vault.tokens.TokenStore.consume_reset_token"
    assert any(p.startswith("search: ") for p in first.provenance)
    assert grant.faults_used == 0 and grant.refused == ()
    assert grant.tokens_used == sum(page.token_count for page in grant.pages) == grant.page_tokens


def test_page_ids_and_fingerprints_are_the_git_blob_ids_of_the_files(
    vault: Path, task: Task, hash_object: Callable[[Path, str], str]
) -> None:
    with ContextKernel.open(vault, task()) as kernel:
        pages = kernel.initial_grant().pages
        assert kernel.pages() == pages
    for page in pages:
        blob = hash_object(vault, page.path)
        assert page.fingerprint == blob
        assert page.kind == "file"
        assert page.id == f"file:{page.path}:{blob}"
        assert page.content == (vault / page.path).read_text()
        assert page.lines == (1, page.content.count("\n"))
        assert page.token_count > 0


def test_the_initial_set_keeps_a_reserve_of_the_budget_for_faults(vault: Path, task: Task) -> None:
    with ContextKernel.open(vault, task(pages=4, context_faults=3)) as kernel:
        assert len(kernel.initial_grant().pages) == 3  # one page kept for a fault
    with ContextKernel.open(vault, task(context_tokens=80)) as kernel:
        grant = kernel.initial_grant()
    assert grant.tokens_used <= 60  # a quarter of the tokens kept for faults
    assert grant.pages[0].path == "tests/test_tokens.py"


def test_the_initial_grant_is_served_once(vault: Path, task: Task) -> None:
    with ContextKernel.open(vault, task()) as kernel:
        kernel.initial_grant()
        with pytest.raises(ContextError, match="already served"):
            kernel.initial_grant()


def _big_module(lines: int, middle: str) -> str:
    body = [f"VALUE_{i:05d} = {i}  # a constant that fills the module\n" for i in range(lines)]
    body.insert(lines // 2, f"\n\ndef {middle}(token):\n    return token.strip()\n\n\n")
    return "".join(body)


@pytest.mark.parametrize(
    ("risk", "size", "kind"),
    [("medium", 11_000, "file"), ("medium", 20_000, "slice"), ("high", 20_000, "file")],
)
def test_files_up_to_12k_characters_or_32k_for_high_risk_are_whole_pages_else_slices(
    tmp_path: Path, task: Task, risk: str, size: int, kind: str
) -> None:
    text = _big_module(size // 50, "rotate_reset_token")
    repo = make_repo(tmp_path / "big", {"src/keys.py": text}, commit=True)
    with ContextKernel.open(
        repo, task("rotate_reset_token", risk=risk, context_tokens=50_000)
    ) as k:
        (page,) = k.initial_grant().pages
    assert page.kind == kind and page.symbol == "src.keys.rotate_reset_token"
    lines = text.splitlines(keepends=True)
    first, last = page.lines
    assert page.content == "".join(lines[first - 1 : last])  # whole lines, as on disk
    if kind == "file":
        assert page.content == text and ":L" not in page.id
    else:
        assert len(page.content) <= SLICE_CHARS
        assert len(page.content) > SLICE_CHARS - 200  # about 6,000 characters
        assert "def rotate_reset_token(token):" in page.content  # centred on the match
        assert page.id.endswith(f":L{first}-L{last}")


def test_a_high_risk_file_over_32k_characters_is_a_slice(tmp_path: Path, task: Task) -> None:
    text = _big_module(33_000 // 50, "rotate_reset_token")
    assert len(text) > 32_000
    repo = make_repo(tmp_path / "big", {"src/keys.py": text}, commit=True)
    with ContextKernel.open(repo, task("rotate_reset_token", risk="high")) as kernel:
        (page,) = kernel.initial_grant().pages
    assert page.kind == "slice" and "def rotate_reset_token" in page.content


def test_a_page_whose_file_changed_since_it_was_granted_is_refused_as_stale(
    vault: Path, task: Task
) -> None:
    with ContextKernel.open(vault, task()) as kernel:
        pages = {page.path: page for page in kernel.initial_grant().pages}
        test_page, source = pages["tests/test_tokens.py"], pages["src/vault/tokens.py"]
        assert kernel.refresh(source.id) == source  # unchanged: served again
        (vault / "tests/test_tokens.py").write_text("def test_nothing():\n    pass\n")
        with pytest.raises(StalePageError) as caught:
            kernel.refresh(test_page.id)
        assert caught.value.code == "lattice.page_stale"
        assert test_page.id in caught.value.message
        with pytest.raises(StalePageError):
            kernel.verify(test_page)
        (vault / "src/vault/tokens.py").unlink()
        with pytest.raises(StalePageError, match="gone or unreadable"):
            kernel.refresh(source.id)
        with pytest.raises(ContextError, match="no page"):
            kernel.refresh("file:nowhere.py:0000")


def test_a_changed_file_read_again_gets_a_new_id(vault: Path, task: Task) -> None:
    with ContextKernel.open(vault, task()) as kernel:
        (old,) = kernel.fault([_ask("src/vault/audit.py")]).pages
        (vault / "src/vault/audit.py").write_text("def record_event(log, event):\n    pass\n")
        (new,) = kernel.fault([_ask("src/vault/audit.py")]).pages
    assert new.id != old.id and new.content != old.content


def test_the_index_lives_in_dot_lattice_and_ignores_the_environment(
    vault: Path, task: Task, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REPOCONTEXT_EMBEDDER", "minilm")
    monkeypatch.setenv("REPOCONTEXT_PORT", "not-a-port")
    monkeypatch.setenv("REPOCONTEXT_DATA_DIR", str(vault.parent / "elsewhere"))
    settings = index_settings(vault)
    assert settings.data_dir == vault.resolve() / ".lattice" / "index"
    assert settings.embedder == "off" and settings.reconcile == "off"
    with ContextKernel.open(vault, task()) as kernel:
        assert kernel.index.repo_id == REPO_ID
        assert kernel.ranking.retrieval == "keyword.no_embedder"
        paths = {node.path for node in kernel.index.workspace.files(REPO_ID)}
    assert (vault / ".lattice" / "index").is_dir()
    assert not any(path.startswith(".lattice") for path in paths)
    assert "/.lattice/" in (vault / ".git" / "info" / "exclude").read_text()
    assert not (vault.parent / "elsewhere").exists()


def test_a_moved_repository_is_indexed_again_at_its_new_root(
    vault: Path, task: Task, tmp_path: Path
) -> None:
    with ContextKernel.open(vault, task()) as kernel:
        kernel.initial_grant()
    moved = tmp_path / "moved"
    shutil.move(vault, moved)
    with ContextKernel.open(moved, task()) as kernel:
        grant = kernel.initial_grant()
    assert grant.pages[0].path == "tests/test_tokens.py"
    assert kernel.index.root == moved.resolve()


def test_javascript_requires_and_relative_imports_lead_to_their_files(
    tmp_path: Path, task: Task
) -> None:
    files = {
        "src/cart.js": 'const { applyDiscount } = require("./pricing");\n\n'
        "function cartTotal(items, code) {\n"
        "  return applyDiscount(items.reduce((s, i) => s + i.price, 0), code);\n}\n\n"
        "module.exports = { cartTotal };\n",
        "src/pricing.js": 'const { RATES } = require("./rates.js");\n\n'
        "function applyDiscount(amount, code) {\n  return amount * (1 - (RATES[code] || 0));\n}\n"
        "\nmodule.exports = { applyDiscount };\n",
        "src/rates.js": "const RATES = { TEN: 0.1 };\nmodule.exports = { RATES };\n",
        "test/cart.test.js": 'import test from "node:test";\n'
        'import { cartTotal } from "../src/cart.js";\n\n'
        'test("cart total", () => cartTotal([], "TEN"));\n',
    }
    repo = make_repo(tmp_path / "shop", files, commit=True)
    with ContextKernel.open(repo, task("The cart total should apply the discount code")) as k:
        pages = k.initial_grant().pages
    assert [(p.path, p.reason) for p in pages[:3]] == [
        ("test/cart.test.js", "test"),
        ("src/cart.js", "imported by test"),
        ("src/pricing.js", "import hop"),
    ]


def _ask(path: str | None = None, symbol: str | None = None) -> ContextRequestItem:
    return ContextRequestItem("need it", path_hint=path, symbol=symbol)
