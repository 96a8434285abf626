"""The one settings object of ``repocontext``.

Built once by the entrypoint (the CLI) from ``REPOCONTEXT_*`` environment variables and the
command-line flags (a flag wins over its variable), then passed down. Library code never reads
the environment itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import platformdirs
from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

__all__ = ["Settings", "Transport", "default_data_dir"]

Transport = Literal["stdio", "http"]
"""How the MCP server talks to its clients."""


def default_data_dir() -> Path:
    """Return the per-user data directory used when ``data_dir`` is not set."""
    return Path(platformdirs.user_data_dir("repocontext"))


class Settings(BaseSettings):
    """Runtime configuration of the repocontext server.

    Attributes:
        data_dir: Directory that holds the store (``<data_dir>/store``), or with ``store_url``
            what this server derives from it (keyword and vector indexes) and its locks.
        store_url: The store's database instead of LMDB in ``data_dir``:
            ``postgresql://user:password@host:port/dbname`` (PostgreSQL backend). Unset: the
            embedded LMDB store. Never printed with its password.
        enable_writes: Advertise and allow the write tools.
        workspace_root: Every repository path a caller passes must resolve inside it.
        repo: A repository to register at start; also the workspace root when none is set.
        transport: ``stdio`` or ``http`` (streamable HTTP).
        host: Address the HTTP server binds to.
        port: Port the HTTP server listens on.
        reconcile: How a serving process keeps indexed repositories fresh: ``watch``
            (file-system events, plus a full pass every ``reconcile_interval_seconds``),
            ``poll`` (only the periodic full pass) or ``off``.
        reconcile_interval_seconds: Seconds between full reconcile passes.
        token_encoding: The BPE encoding every token count uses (file nodes, bundles, stats).
        embedder: The embedding backend of semantic search: ``static`` (wordllama, fast),
            ``minilm`` (all-MiniLM-L6-v2, slower) or ``off`` (keyword-only).
        claim_default_lease_seconds: Lease of a claim that asks for none.
        claim_max_lease_seconds: The longest lease a claim or renewal gets.
        auth_tokens_file: JSON file mapping bearer tokens (or their SHA-256 digests) to grants;
            when set, HTTP callers without a valid token get 401.
        local_role: The grant of callers without a token: stdio, and HTTP when no tokens file
            is set (``reader`` or ``curator``).
        local_repos: Repositories the local grant may see (``*`` for all).
        allowed_hosts: Extra ``Host`` header patterns the MCP endpoint accepts (``host:port``,
            ``host:*``), e.g. the name a container is reached by.
        archive_dir: Directory for the memory archive; unset disables archiving.
        archive_interval_seconds: Seconds between periodic archive exports (at least 30).
        archive_restore: Restore memory from the archive at start: ``auto`` (only when memory
            is empty), ``always`` (merge every time) or ``off``.
        max_file_bytes: Files larger than this are indexed as nodes without content.
        feed_max_events: Change-feed events the store keeps at most (the TTL sweep trims the
            oldest; a consumer that falls behind rebuilds from the records).
        access_log: Write one structured (JSON) log line per HTTP request.
        workers: Server processes of ``serve --transport http`` (unset: one per core);
            each serves the same port over the same store. stdio serves in one.
    """

    model_config = SettingsConfigDict(
        env_prefix="REPOCONTEXT_",
        frozen=True,
        extra="forbid",
    )

    data_dir: Path = Field(default_factory=default_data_dir)
    store_url: str | None = Field(default=None, repr=False)
    enable_writes: bool = False
    workspace_root: Path | None = None
    repo: Path | None = None
    transport: Transport = "stdio"
    host: str = "127.0.0.1"
    port: int = Field(default=8765, ge=0, le=65535)
    reconcile: Literal["watch", "poll", "off"] = "watch"
    reconcile_interval_seconds: float = Field(default=600.0, ge=1.0)
    embedder: Literal["static", "minilm", "off"] = "static"
    token_encoding: Literal["o200k_base", "cl100k_base"] = "o200k_base"
    claim_default_lease_seconds: float = Field(default=60.0, gt=0)
    claim_max_lease_seconds: float = Field(default=3600.0, gt=0)
    auth_tokens_file: Path | None = None
    local_role: Literal["reader", "curator"] = "curator"
    local_repos: Annotated[tuple[str, ...], NoDecode] = ("*",)
    allowed_hosts: Annotated[tuple[str, ...], NoDecode] = ()
    archive_dir: Path | None = None
    archive_interval_seconds: float = Field(default=300.0, ge=30.0)
    archive_restore: Literal["auto", "always", "off"] = "auto"
    max_file_bytes: int = Field(default=1_000_000, ge=1)
    feed_max_events: int = Field(default=1_000_000, ge=1000)
    access_log: bool = True
    workers: int | None = Field(default=None, ge=1, le=256)

    @model_validator(mode="before")
    @classmethod
    def _repo_is_the_default_workspace_root(cls, data: Any) -> Any:
        # A single --repo is the common case; it doubles as the workspace root so the path
        # guard has something to check against without a second flag.
        if isinstance(data, dict) and data.get("repo") and not data.get("workspace_root"):
            return {**data, "workspace_root": data["repo"]}
        return data

    @property
    def serve_mode(self) -> Literal["single_repo", "workspace", "none"]:
        """Return how the server was started.

        ``single_repo``: ``--repo`` without a separate workspace root; ``workspace``:
        ``--workspace-root``; ``none``: no root, so no path-taking tool is offered.
        """
        if self.workspace_root is None:
            return "none"
        if self.repo is not None and self.repo.resolve() == self.workspace_root.resolve():
            return "single_repo"
        return "workspace"

    @field_validator("local_repos", "allowed_hosts", mode="before")
    @classmethod
    def _comma_separated(cls, value: Any) -> Any:
        # Environment variables and flags give lists as "a,b"; JSON lists also work.
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value

    @field_validator("data_dir", "workspace_root", "repo", "auth_tokens_file", "archive_dir")
    @classmethod
    def _expand_user(cls, value: Path | None) -> Path | None:
        return value.expanduser() if value is not None else None
