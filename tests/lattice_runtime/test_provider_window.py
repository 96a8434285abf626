"""Rate-limit window usage from provider headers, and the guard it feeds."""

from __future__ import annotations

import pytest

from lattice_runtime.workers import guard_decision
from lattice_runtime.workers.providers import (
    read_anthropic_window_usage,
    read_openai_window_usage,
)
from tests.lattice_runtime.provider_server import ANTHROPIC_LIMITS, OPENAI_LIMITS


def test_the_window_usage_is_the_largest_used_share_over_the_dimensions() -> None:
    assert read_anthropic_window_usage(ANTHROPIC_LIMITS) == 25.0
    assert read_openai_window_usage(OPENAI_LIMITS) == 30.0


def test_header_names_are_read_in_any_case() -> None:
    headers = {"X-RateLimit-Limit-Requests": "10", "X-RateLimit-Remaining-Requests": "1"}
    assert read_openai_window_usage(headers) == 90.0


def test_an_exhausted_and_an_untouched_window_read_100_and_0() -> None:
    assert (
        read_openai_window_usage(
            {"x-ratelimit-limit-tokens": "5", "x-ratelimit-remaining-tokens": "0"}
        )
        == 100.0
    )
    assert (
        read_openai_window_usage(
            {"x-ratelimit-limit-tokens": "5", "x-ratelimit-remaining-tokens": "5"}
        )
        == 0.0
    )


def test_one_provider_does_not_read_the_other_providers_headers() -> None:
    assert read_anthropic_window_usage(OPENAI_LIMITS) is None
    assert read_openai_window_usage(ANTHROPIC_LIMITS) is None


@pytest.mark.parametrize(
    "change",
    [
        {"x-ratelimit-remaining-tokens": "-1"},
        {"x-ratelimit-remaining-tokens": "1.5"},
        {"x-ratelimit-remaining-tokens": ""},
        {"x-ratelimit-remaining-tokens": "200001"},
        {"x-ratelimit-limit-tokens": "0", "x-ratelimit-remaining-tokens": "0"},
        {"x-ratelimit-limit-tokens": "lots"},
        {"x-ratelimit-limit-images": "10"},
    ],
)
def test_a_malformed_dimension_makes_the_reading_none_and_the_guard_refuse(
    change: dict[str, str],
) -> None:
    used = read_openai_window_usage({**OPENAI_LIMITS, **change})
    assert used is None
    assert not guard_decision(used, 1).allowed


def test_missing_headers_read_none_and_the_guard_refuses() -> None:
    assert read_anthropic_window_usage({}) is None
    assert read_openai_window_usage({"content-type": "application/json"}) is None
    decision = guard_decision(read_openai_window_usage({}), 0)
    assert not decision.allowed and "missing or malformed" in decision.reason


def test_a_remaining_count_without_its_limit_is_malformed() -> None:
    headers = {**ANTHROPIC_LIMITS, "anthropic-ratelimit-tokens-remaining": "5"}
    assert read_anthropic_window_usage(headers) is None
