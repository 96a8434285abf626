"""How a provider worker is configured, and how provider failures read as worker errors.

Library code never reads the environment: the API key arrives as a parameter (the CLI reads
``ANTHROPIC_API_KEY`` / ``OPENAI_API_KEY`` at its edge).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from lattice_runtime.errors import ConfigError, WorkerError
from lattice_runtime.workers.providers.policy import Effort

__all__ = ["ProviderConfig", "lower_headers", "missing_sdk", "short", "status_error"]

_MESSAGE_CHARS: Final = 300


@dataclass(frozen=True, slots=True)
class ProviderConfig:
    """One provider worker's settings.

    Attributes:
        model: The provider's model name.
        api_key: The API key (never logged, never in a record).
        base_url: The API's base URL; ``None`` for the provider's default.
        max_tokens: Most output tokens per turn.
        effort: Reasoning effort, or ``None`` to leave the provider's default.
        max_retries: Retries the SDK makes on connection errors, 408/409/429 and 5xx.
        timeout_s: Seconds one request may take.

    Raises:
        ConfigError: An empty model or key, or a non-positive limit.
    """

    model: str
    api_key: str = field(repr=False)
    base_url: str | None = None
    max_tokens: int = 8192
    effort: Effort | None = None
    max_retries: int = 2
    timeout_s: float = 300.0

    def __post_init__(self) -> None:
        if not self.model.strip():
            raise ConfigError("the provider model is empty", hint="Pass --model.")
        if not self.api_key.strip():
            raise ConfigError(
                "no API key for the provider",
                hint="Set ANTHROPIC_API_KEY or OPENAI_API_KEY (or pass the key explicitly).",
            )
        if self.max_tokens < 1 or self.max_retries < 0 or not self.timeout_s > 0:
            raise ConfigError(
                "max_tokens must be >= 1, max_retries >= 0 and timeout_s > 0",
                hint="Check the provider worker's limits.",
            )


def missing_sdk(package: str) -> WorkerError:
    """The error for a provider SDK that is not installed.

    Args:
        package: The SDK's distribution name.

    Returns:
        A worker error naming the extra to install.
    """
    return WorkerError(
        f"the {package} SDK is not installed",
        hint="Install the providers extra: pip install 'repocontext-lattice[providers]'.",
    )


def status_error(provider: str, status: int, message: str) -> WorkerError:
    """The error for an HTTP error status from a provider.

    Args:
        provider: ``anthropic`` or ``openai``.
        status: The HTTP status.
        message: The provider's own message.

    Returns:
        A worker error whose message names the status and whose hint says what to do.
    """
    if status in (401, 403):
        hint = "Check the API key and its permissions."
    elif status == 429:
        hint = "The provider's rate limit or quota is reached; wait for the window to reset."
    elif status >= 500:
        hint = "The provider failed; try again later."
    else:
        hint = "Check the model name and the request limits."
    return WorkerError(f"{provider} returned HTTP {status}: {message}", hint=hint)


def lower_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """A response's headers as a plain dict with lower-case names.

    Args:
        headers: The SDK's headers (case-insensitive mapping).

    Returns:
        A copy with lower-case names.
    """
    return {key.lower(): value for key, value in headers.items()}


def short(text: str) -> str:
    """``text`` cut to a message-sized length.

    Args:
        text: A provider's message.

    Returns:
        At most 300 characters.
    """
    return text if len(text) <= _MESSAGE_CHARS else text[: _MESSAGE_CHARS - 1] + "…"
