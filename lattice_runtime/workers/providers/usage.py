"""What a provider reports a turn cost: tokens (and money, when it says so).

Numbers come only from the provider's response (``usage``); nothing here estimates. The
Anthropic and OpenAI readers live next to their workers; this module is the shared record.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ProviderUsage"]


@dataclass(frozen=True, slots=True)
class ProviderUsage:
    """The provider-reported usage of one turn.

    Attributes:
        input_tokens: Every input token of the request, cached ones included (Anthropic:
            ``input_tokens + cache_read_input_tokens + cache_creation_input_tokens``;
            OpenAI: ``prompt_tokens``).
        cached_input_tokens: Input tokens read from the provider's prompt cache.
        output_tokens: Output tokens, reasoning included (what the provider bills).
        reasoning_tokens: The part of ``output_tokens`` spent on reasoning (0 when not
            reported).
        cost_usd: The cost in US dollars when the provider reports it, else ``None``.
        cache_write_tokens: Input tokens written to the prompt cache (Anthropic's
            ``cache_creation_input_tokens``; 0 when not reported).
    """

    input_tokens: int
    cached_input_tokens: int
    output_tokens: int
    reasoning_tokens: int
    cost_usd: float | None = None
    cache_write_tokens: int = 0

    def to_wire(self) -> dict[str, int | float | None]:
        """The usage as a JSON object (camelCase keys, for run telemetry).

        Returns:
            ``{"inputTokens", "cachedInputTokens", "cacheWriteTokens", "outputTokens",
            "reasoningTokens", "costUsd"}``.
        """
        return {
            "inputTokens": self.input_tokens,
            "cachedInputTokens": self.cached_input_tokens,
            "cacheWriteTokens": self.cache_write_tokens,
            "outputTokens": self.output_tokens,
            "reasoningTokens": self.reasoning_tokens,
            "costUsd": self.cost_usd,
        }


def count(value: object) -> int:
    """A reported token count, or 0 when absent or not a non-negative integer."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return 0
    return value
