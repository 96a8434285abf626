"""The repository map a grant carries: ungranted files, 8 symbols each, 12,000 characters."""

from collections.abc import Callable
from pathlib import Path

from lattice_runtime.compile.task import TaskIR
from lattice_runtime.kernel import MAP_CHARS, MAP_SYMBOLS, ContextKernel
from lattice_runtime.protocol.messages import ContextRequestItem
from repocontext.testing import make_repo

Task = Callable[..., TaskIR]


def _module(index: int) -> str:
    functions = [
        f"def compute_quarterly_ledger_balance_{index:03d}_{n:02d}(amount):\n"
        f"    return amount + {n}\n\n\n"
        for n in range(12)
    ]
    return "".join(functions)


def _wide_repo(root: Path) -> Path:
    files = {f"src/ledger/module_{i:03d}.py": _module(i) for i in range(80)}
    files["src/ledger/rounding.py"] = "def round_cents(amount):\n    return round(amount, 2)\n"
    files["tests/test_rounding.py"] = (
        "from ledger.rounding import round_cents\n\n\n"
        "def test_round_cents_keeps_two_places():\n    assert round_cents(1.234) == 1.23\n"
    )
    return make_repo(root, files, commit=True)


def test_the_map_lists_ungranted_files_with_at_most_8_symbols_in_12000_characters(
    tmp_path: Path, task: Task
) -> None:
    repo = _wide_repo(tmp_path / "ledger")
    with ContextKernel.open(repo, task("round_cents should keep two places")) as kernel:
        grant = kernel.initial_grant()
        granted = {page.path for page in grant.pages}
        assert granted >= {"tests/test_rounding.py", "src/ledger/rounding.py"}
        lines = grant.repo_map.splitlines()
        assert len(grant.repo_map) <= MAP_CHARS
        longest = max(len(line) for line in lines)
        assert len(grant.repo_map) + 1 + longest > MAP_CHARS  # the next line would not fit
        assert len(lines) < 80  # the repository is wider than the map
        listed = [line.split(": ")[0] for line in lines]
        assert not granted & set(listed)
        for line in lines:
            path, _, symbols = line.partition(": ")
            assert path.startswith("src/ledger/module_")
            assert 0 < len(symbols.split(", ")) <= MAP_SYMBOLS == 8
        (page,) = kernel.fault([ContextRequestItem("more", path_hint=listed[0])]).pages
        assert listed[0] not in kernel.repo_map().splitlines()[0]
        assert page.path == listed[0]


def test_the_map_of_a_small_repository_lists_every_ungranted_file(vault: Path, task: Task) -> None:
    with ContextKernel.open(vault, task()) as kernel:
        grant = kernel.initial_grant()
    granted = {page.path for page in grant.pages}
    listed = {line.split(": ")[0] for line in grant.repo_map.splitlines()}
    indexed = {
        "README.md",
        "docs/tokens.md",
        "src/vault/__init__.py",
        "src/vault/audit.py",
        "src/vault/clock.py",
        "src/vault/login.py",
        "src/vault/tokens.py",
        "tests/test_login.py",
        "tests/test_tokens.py",
    }
    assert listed == indexed - granted
    assert "src/vault/audit.py: record_event" in grant.repo_map.splitlines()
