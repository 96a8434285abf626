"""The one settings object of ``lattice_runtime``.

Built once by the entrypoint (the ``lattice`` command) from ``LATTICE_*`` environment
variables, overridden by command-line flags, then passed down; library code never reads the
environment itself.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from lattice_runtime.kernel import Embedder

__all__ = ["ControlMode", "LatticeSettings"]

ControlMode = Literal["off", "auto", "always"]
"""Continuity only (``auto``), continuity and explicit control (``always``), or neither."""


class LatticeSettings(BaseSettings):
    """Runtime configuration of ``lattice``.

    Attributes:
        embedder: How the context kernel's repocontext index ranks: ``static`` (hybrid
            keyword + the packaged static embedder; no download, about 1 s per 200 files on
            the first index), ``minilm`` (hybrid with MiniLM; slower), ``off`` (keyword only).
        command_timeout_seconds: Each verification command's deadline (exit 124 past it).
        control: Continuity and control mode (``docs/continuity.md``): ``auto`` (the default:
            the session journal, and a continuity projection after a boundary), ``always``
            (also explicit control: contracts, one-use authorization of guarded mutations, the
            plan graph), ``off`` (neither).
    """

    model_config = SettingsConfigDict(env_prefix="LATTICE_", frozen=True, extra="forbid")

    embedder: Embedder = "static"
    command_timeout_seconds: float = Field(default=300.0, gt=0, le=86_400)
    control: ControlMode = "auto"
