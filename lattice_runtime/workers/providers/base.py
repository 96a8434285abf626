"""What the provider workers share: their configuration and what the last response reported.

Each SDK keeps its own wrapper module (:mod:`.anthropic_worker`, :mod:`.openai_worker`); this
base holds only the state both keep between turns, so the two read the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from lattice_runtime.workers.providers.config import ProviderConfig
from lattice_runtime.workers.providers.usage import ProviderUsage

__all__ = ["ProviderWorker"]


class ProviderWorker:
    """A worker that asks a provider's API; subclasses make the requests."""

    provider: ClassVar[str]
    """The provider's name (``anthropic``, ``openai``): the worker's name in run records."""

    def __init__(self, config: ProviderConfig) -> None:
        """Keep ``config``; no usage or headers seen yet."""
        self._config = config
        self._last_usage: ProviderUsage | None = None
        self._last_headers: dict[str, str] | None = None

    @property
    def name(self) -> str:
        """The provider's name."""
        return self.provider

    @property
    def model(self) -> str:
        """The model every request names."""
        return self._config.model

    @property
    def last_usage(self) -> ProviderUsage | None:
        """The provider-reported usage of the last turn (``None``: none yet, or it failed)."""
        return self._last_usage

    @property
    def last_headers(self) -> Mapping[str, str] | None:
        """The headers of the last response, success or error (lower-case names)."""
        return self._last_headers
