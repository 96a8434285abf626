"""The OpenAI provider worker: the official ``openai`` SDK, Chat Completions API.

One request per turn, no conversation history (the prompt holds the whole turn):

- a ``system`` message with the stable protocol prefix (:mod:`.prefix`) first, so OpenAI's
  automatic prompt caching can reuse it (it caches identical prefixes; nothing to mark);
- a ``user`` message with the turn's dynamic part;
- structured output: ``response_format`` ``json_schema`` with ``strict: true`` and the
  response union (:mod:`.schema`); the answer is unwrapped and parsed by the runtime.

Any server that speaks Chat Completions works through ``base_url``. The SDK is imported only
here, when a worker is made.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

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
    unwrap_text,
)
from lattice_runtime.workers.providers.usage import ProviderUsage, count
from lattice_runtime.workers.providers.window import read_openai_window_usage
from lattice_runtime.workers.turn import WorkerTurn

if TYPE_CHECKING:
    from openai import OpenAI
    from openai._legacy_response import LegacyAPIResponse
    from openai.types import CompletionUsage
    from openai.types.chat import ChatCompletion

__all__ = ["OpenAIWorker", "openai_usage"]


class OpenAIWorker(ProviderWorker):
    """Answers each turn with one OpenAI Chat Completions request."""

    provider = "openai"

    def __init__(self, config: ProviderConfig) -> None:
        """Make the SDK client (no request is made).

        Args:
            config: Model, key, base URL, limits.

        Raises:
            WorkerError: The ``openai`` SDK is not installed.
        """
        try:
            import openai
        except ImportError:
            raise missing_sdk("openai") from None
        super().__init__(config)
        self._client: OpenAI = openai.OpenAI(
            api_key=config.api_key,
            base_url=config.base_url,
            max_retries=config.max_retries,
            timeout=config.timeout_s,
        )

    def respond(self, turn: WorkerTurn) -> str:
        """Ask the model for this turn's response.

        Raises:
            WorkerError: The SDK is missing, the provider is unreachable, answers with an
                error status (401, 429, 5xx, ...) or with no choice.
        """
        from openai import omit

        self._last_usage = None
        parts = split_prompt(turn)
        effort = self._config.effort
        completion = self._send(
            lambda: self._client.chat.completions.with_raw_response.create(
                model=self._config.model,
                max_completion_tokens=self._config.max_tokens,
                messages=[
                    {"role": "system", "content": parts.stable},
                    {"role": "user", "content": parts.dynamic},
                ],
                response_format={
                    "type": "json_schema",
                    "json_schema": {
                        "name": RESPONSE_SCHEMA_NAME,
                        "schema": RESPONSE_SCHEMA,
                        "strict": True,
                    },
                },
                reasoning_effort=effort if effort else omit,
            )
        )
        self._last_usage = openai_usage(completion.usage) if completion.usage else None
        if not completion.choices:
            raise WorkerError("openai answered with no choice", hint="Try the turn again.")
        message = completion.choices[0].message
        return unwrap_text(message.content or message.refusal or "")

    def probe(self) -> Mapping[str, str]:
        """Make one minimal request (a one-word prompt, 16 output tokens) and return its headers.

        Raises:
            WorkerError: The provider is unreachable or answers with an error status.
        """
        self._send(
            lambda: self._client.chat.completions.with_raw_response.create(
                model=self._config.model,
                max_completion_tokens=16,
                messages=[{"role": "user", "content": "ping"}],
            )
        )
        return dict(self._last_headers or {})

    def window_usage(self, headers: Mapping[str, str]) -> float | None:
        """The used share of the rate-limit window, from ``x-ratelimit-*`` headers."""
        return read_openai_window_usage(headers)

    def _send(self, call: Callable[[], LegacyAPIResponse[ChatCompletion]]) -> ChatCompletion:
        from openai import APIConnectionError, APIError, APIStatusError

        try:
            raw = call()
            self._last_headers = lower_headers(raw.headers)
            return raw.parse()
        except APIStatusError as exc:
            self._last_headers = lower_headers(exc.response.headers)
            raise status_error("openai", exc.status_code, short(exc.message)) from None
        except APIConnectionError as exc:
            raise WorkerError(
                f"cannot reach openai at {self._client.base_url}: {short(str(exc))}",
                hint="Check the network and the base URL.",
            ) from None
        except APIError as exc:
            raise WorkerError(f"openai answered unreadably: {short(exc.message)}") from None


def openai_usage(usage: CompletionUsage) -> ProviderUsage:
    """The turn's usage from a Chat Completions ``usage`` object.

    Args:
        usage: ``completion.usage``.

    Returns:
        Input = ``prompt_tokens`` (cached included); cached =
        ``prompt_tokens_details.cached_tokens``; output = ``completion_tokens``; reasoning =
        ``completion_tokens_details.reasoning_tokens``; cost = a numeric ``cost`` field when
        the server reports one (OpenAI-compatible gateways do), else ``None``.
    """
    prompt = usage.prompt_tokens_details
    completion = usage.completion_tokens_details
    return ProviderUsage(
        input_tokens=count(usage.prompt_tokens),
        cached_input_tokens=count(prompt.cached_tokens) if prompt else 0,
        output_tokens=count(usage.completion_tokens),
        reasoning_tokens=count(completion.reasoning_tokens) if completion else 0,
        cost_usd=_cost((usage.model_extra or {}).get("cost")),
        cache_write_tokens=count(prompt.cache_write_tokens) if prompt else 0,
    )


def _cost(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return None
    return float(value)
