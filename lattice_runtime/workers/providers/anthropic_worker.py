"""The Anthropic provider worker: the official ``anthropic`` SDK, Messages API.

One request per turn, no conversation history (the prompt holds the whole turn):

- ``system``: the stable protocol prefix (:mod:`.prefix`) as one text block marked
  ``cache_control: {"type": "ephemeral"}``, so the tool definition and the prefix are cached;
- ``messages``: one user message, the turn's dynamic part;
- structured output: one ``strict`` tool, ``lattice_response``, whose input schema is the
  response union (:mod:`.schema`), forced with ``tool_choice``; its input is unwrapped and
  parsed by the runtime like any answer (a text answer is passed on as text).

The SDK is imported only here, when a worker is made.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Final, cast

from lattice_runtime.errors import WorkerError
from lattice_runtime.workers.providers.base import ProviderWorker
from lattice_runtime.workers.providers.config import (
    ProviderConfig,
    lower_headers,
    missing_sdk,
    short,
    status_error,
)
from lattice_runtime.workers.providers.prefix import split_prompt
from lattice_runtime.workers.providers.schema import (
    RESPONSE_SCHEMA,
    RESPONSE_SCHEMA_NAME,
    unwrap_answer,
    unwrap_text,
)
from lattice_runtime.workers.providers.usage import ProviderUsage, count
from lattice_runtime.workers.providers.window import read_anthropic_window_usage
from lattice_runtime.workers.turn import WorkerTurn

if TYPE_CHECKING:
    from anthropic import Anthropic, APIResponse
    from anthropic.types import Message, ToolParam, Usage

__all__ = ["AnthropicWorker", "anthropic_usage"]

_TOOL_DESCRIPTION: Final = (
    "Send your one response of this turn: a context request or a patch, as the rules say."
)


class AnthropicWorker(ProviderWorker):
    """Answers each turn with one Anthropic Messages request."""

    provider = "anthropic"

    def __init__(self, config: ProviderConfig) -> None:
        """Make the SDK client (no request is made).

        Args:
            config: Model, key, base URL, limits.

        Raises:
            WorkerError: The ``anthropic`` SDK is not installed.
        """
        try:
            import anthropic
        except ImportError:
            raise missing_sdk("anthropic") from None
        super().__init__(config)
        self._client: Anthropic = anthropic.Anthropic(
            api_key=config.api_key,
            base_url=config.base_url,
            max_retries=config.max_retries,
            timeout=config.timeout_s,
        )

    def respond(self, turn: WorkerTurn) -> str:
        """Ask the model for this turn's response.

        Raises:
            WorkerError: The SDK is missing, the provider is unreachable or answers with an
                error status (401, 429, 5xx, ...).
        """
        from anthropic import omit

        self._last_usage = None
        parts = split_prompt(turn)
        effort = self._config.effort
        message = self._send(
            lambda: self._client.messages.with_raw_response.create(
                model=self._config.model,
                max_tokens=self._config.max_tokens,
                system=[
                    {"type": "text", "text": parts.stable, "cache_control": {"type": "ephemeral"}}
                ],
                messages=[{"role": "user", "content": parts.dynamic}],
                tools=[_tool()],
                tool_choice={"type": "tool", "name": RESPONSE_SCHEMA_NAME},
                output_config={"effort": effort} if effort else omit,
            )
        )
        self._last_usage = anthropic_usage(message.usage)
        return _answer(message)

    def probe(self) -> Mapping[str, str]:
        """Make one minimal request (one output token) and return its headers.

        Raises:
            WorkerError: The provider is unreachable or answers with an error status.
        """
        self._send(
            lambda: self._client.messages.with_raw_response.create(
                model=self._config.model,
                max_tokens=1,
                messages=[{"role": "user", "content": "ping"}],
            )
        )
        return dict(self._last_headers or {})

    def window_usage(self, headers: Mapping[str, str]) -> float | None:
        """The used share of the rate-limit window, from ``anthropic-ratelimit-*`` headers."""
        return read_anthropic_window_usage(headers)

    def _send(self, call: Callable[[], APIResponse[Message]]) -> Message:
        from anthropic import APIConnectionError, APIError, APIStatusError

        try:
            raw = call()
            self._last_headers = lower_headers(raw.headers)
            return raw.parse()
        except APIStatusError as exc:
            self._last_headers = lower_headers(exc.response.headers)
            raise status_error("anthropic", exc.status_code, short(exc.message)) from None
        except APIConnectionError as exc:
            raise WorkerError(
                f"cannot reach anthropic at {self._client.base_url}: {short(str(exc))}",
                hint="Check the network and the base URL.",
            ) from None
        except APIError as exc:
            raise WorkerError(f"anthropic answered unreadably: {short(exc.message)}") from None


def anthropic_usage(usage: Usage) -> ProviderUsage:
    """The turn's usage from an Anthropic ``usage`` object.

    Args:
        usage: ``message.usage``.

    Returns:
        Input = ``input_tokens`` + cache reads + cache writes; cached = cache reads;
        reasoning = ``output_tokens_details.thinking_tokens``; no cost (not reported).
    """
    read = count(usage.cache_read_input_tokens)
    write = count(usage.cache_creation_input_tokens)
    details = usage.output_tokens_details
    return ProviderUsage(
        input_tokens=count(usage.input_tokens) + read + write,
        cached_input_tokens=read,
        output_tokens=count(usage.output_tokens),
        reasoning_tokens=count(details.thinking_tokens) if details else 0,
        cost_usd=None,
        cache_write_tokens=write,
    )


def _tool() -> ToolParam:
    return cast(
        "ToolParam",
        {
            "name": RESPONSE_SCHEMA_NAME,
            "description": _TOOL_DESCRIPTION,
            "input_schema": RESPONSE_SCHEMA,
            "strict": True,
        },
    )


def _answer(message: Message) -> str:
    for block in message.content:
        if block.type == "tool_use" and block.name == RESPONSE_SCHEMA_NAME:
            return unwrap_answer(block.input)
    return unwrap_text("".join(b.text for b in message.content if b.type == "text"))
