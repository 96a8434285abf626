import hashlib
import json
import logging
from pathlib import Path

import pytest
from mcp import Client

from repocontext.auth import FULL_ACCESS, Grant, TokenBook, check_key, current_grant, granted
from repocontext.errors import AuthConfigError, GrantMissingError, RepoForbiddenError
from repocontext.mcp import build_server
from repocontext.settings import Settings
from repocontext.store.keys import file_key, mem_key
from repocontext.testing import tool_error
from repocontext.workspace import Workspace


def write_tokens(path: Path, entries: object) -> Path:
    path.write_text(json.dumps(entries))
    return path


def test_a_token_book_maps_plain_and_digest_tokens_to_grants(tmp_path: Path) -> None:
    digest = hashlib.sha256(b"second").hexdigest()
    book = TokenBook.load(
        write_tokens(
            tmp_path / "t.json",
            {
                "tokens": [
                    {"token": "first", "role": "reader", "repos": ["a", "b"], "name": "ci"},
                    {"token": f"sha256:{digest.upper()}", "role": "curator", "repos": ["*"]},
                ]
            },
        )
    )
    assert book.lookup("first") == Grant("ci", "reader", frozenset({"a", "b"}))
    assert book.lookup("second") == Grant(digest[:8], "curator", None)
    assert book.lookup("sha256:" + digest) is None  # the digest itself is not a token
    assert book.lookup("") is None
    assert [g.name for g in book.grants()] == sorted(["ci", digest[:8]])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "is not JSON"),
        ("[]", "expected"),
        ('{"tokens": []}', "at least one"),
        ('{"tokens": ["x"]}', "expected an object"),
        ('{"tokens": [{"role": "reader"}]}', "'token' must be"),
        ('{"tokens": [{"token": "sha256:abc", "role": "reader"}]}', "64 hex digits"),
        ('{"tokens": [{"token": "t", "role": "root"}]}', "unknown role"),
        ('{"tokens": [{"token": "t", "role": "reader", "repos": []}]}', "non-empty list"),
        ('{"tokens": [{"token": "t", "role": "reader", "repos": "a"}]}', "must be a list"),
        (
            '{"tokens": [{"token": "t", "role": "reader"}, {"token": "t", "role": "curator"}]}',
            "appears twice",
        ),
    ],
)
def test_a_malformed_tokens_file_is_refused_with_a_clear_message(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "t.json"
    path.write_text(content)
    with pytest.raises(AuthConfigError, match=message) as caught:
        TokenBook.load(path)
    assert caught.value.code == "auth.config_invalid"


def test_a_missing_tokens_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(AuthConfigError, match="cannot read"):
        TokenBook.load(tmp_path / "absent.json")


def test_grants_scope_keys_by_their_repository() -> None:
    grant = Grant("g", "reader", frozenset({"a"}))
    check_key(file_key("a", "x.py"), grant)
    check_key("not a key", grant)  # left to the tool to report
    with pytest.raises(RepoForbiddenError):
        check_key(mem_key("b", "topic", "id"), grant)
    with granted(FULL_ACCESS):
        with granted(grant):
            assert current_grant() == grant
        assert current_grant() == FULL_ACCESS
    with pytest.raises(GrantMissingError):
        current_grant()


@pytest.mark.anyio
async def test_the_local_grant_decides_what_a_stdio_caller_sees(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    base = Settings(data_dir=tmp_path / "data", workspace_root=tmp_path, enable_writes=True)
    with Workspace.open(base) as workspace:
        workspace.register_repo(tmp_path / "a")
        workspace.register_repo(tmp_path / "b")
        reader = base.model_copy(update={"local_role": "reader", "local_repos": ("a",)})
        async with Client(build_server(workspace, reader)) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert "repocontext_remember" not in names
            listed = (await client.call_tool("repocontext_list_repos", {})).structured_content
            assert [repo["repoId"] for repo in listed["repos"]] == ["a"]
            topics = await client.call_tool("repocontext_list_topics", {"repoId": "b"})
            assert tool_error(topics)["code"] == "auth.repo_forbidden"
            health = (await client.call_tool("repocontext_health", {})).structured_content
            assert health["repositories"] == 1
            other = await client.call_tool("repocontext_health", {"repoId": "b"})
            assert tool_error(other)["code"] == "auth.repo_forbidden"
        async with Client(build_server(workspace, base)) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert "repocontext_remember" in names


def test_settings_parse_comma_separated_lists_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("REPOCONTEXT_LOCAL_REPOS", "a, b")
    monkeypatch.setenv("REPOCONTEXT_ALLOWED_HOSTS", "repocontext:*")
    settings = Settings()
    assert settings.local_repos == ("a", "b")
    assert settings.allowed_hosts == ("repocontext:*",)


def test_a_short_plaintext_token_is_loaded_with_a_warning_naming_its_grant_not_the_token(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    long_token = "x" * 32
    digest = hashlib.sha256(b"s").hexdigest()
    entries = [
        {"token": "k", "role": "reader", "repos": ["*"], "name": "laptop"},
        {"token": long_token, "role": "reader", "repos": ["*"], "name": "ci"},
        {"token": f"sha256:{digest}", "role": "curator", "repos": ["*"], "name": "ops"},
    ]
    with caplog.at_level(logging.WARNING, logger="repocontext.auth"):
        book = TokenBook.load(write_tokens(tmp_path / "t.json", {"tokens": entries}))
    assert book.lookup("k") is not None  # accepted: a warning, not a refusal
    [warning] = [r for r in caplog.records if r.name == "repocontext.auth"]
    assert warning.levelno == logging.WARNING
    assert "'laptop'" in warning.getMessage() and "32 characters" in warning.getMessage()
    assert "'k'" not in warning.getMessage() and long_token not in caplog.text
