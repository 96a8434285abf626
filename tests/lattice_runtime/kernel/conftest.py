"""A small real repository and the tasks the kernel tests run over it."""

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from lattice_runtime.compile.task import Budget, Risk, Scope, TaskIR
from repocontext.testing import make_repo

GOAL = "A reset token is consumed only once by consume_reset_token"

VAULT = {
    "README.md": "# Vault\n\nReset tokens and logins for a small service.\n",
    "src/vault/__init__.py": "",
    "src/vault/clock.py": "import time\n\n\ndef now() -> float:\n    return time.time()\n",
    "src/vault/tokens.py": (
        "from vault.clock import now\n"
        "\n\n"
        "class TokenStore:\n"
        "    def __init__(self):\n"
        "        self._tokens = {}\n"
        "\n"
        "    def issue(self, token, ttl):\n"
        "        self._tokens[token] = now() + ttl\n"
        "\n"
        "    def consume_reset_token(self, token):\n"
        "        expiry = self._tokens.get(token)\n"
        "        return expiry is not None and expiry > now()\n"
    ),
    "src/vault/audit.py": "def record_event(log, event):\n    log.append(event)\n",
    "src/vault/login.py": "def login(user, password):\n    return bool(user and password)\n",
    "tests/test_tokens.py": (
        "from vault.tokens import TokenStore\n"
        "\n\n"
        "def test_reset_token_is_consumed_once():\n"
        "    store = TokenStore()\n"
        '    store.issue("t", 60)\n'
        '    assert store.consume_reset_token("t")\n'
        '    assert not store.consume_reset_token("t")\n'
    ),
    "tests/test_login.py": (
        "from vault.login import login\n\n\ndef test_login_needs_a_password():\n"
        '    assert not login("ann", "")\n'
    ),
    "docs/tokens.md": "# Tokens\n\nA reset token is consumed once.\n",
}


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "vault", VAULT, commit=True)


@pytest.fixture
def task() -> Callable[..., TaskIR]:
    def make(
        goal: str = GOAL,
        *,
        risk: Risk = "medium",
        exclude: tuple[str, ...] = (),
        include: tuple[str, ...] = (),
        **budget: int,
    ) -> TaskIR:
        return TaskIR(
            id="task-000000000000",
            goal=goal,
            risk=risk,
            scope=Scope(include=include, exclude=exclude),
            budget=Budget(**budget),
        )

    return make


@pytest.fixture
def hash_object() -> Callable[[Path, str], str]:
    """``git hash-object <path>`` in a repository."""

    def run(repo: Path, path: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(repo), "hash-object", path],
            check=True,
            capture_output=True,
            text=True,
        )
        return done.stdout.strip()

    return run
