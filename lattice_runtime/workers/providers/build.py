"""Making a provider worker from the CLI's flags (the one entry point the CLI calls)."""

from __future__ import annotations

from lattice_runtime.compile.task import Risk
from lattice_runtime.workers.providers.anthropic_worker import AnthropicWorker
from lattice_runtime.workers.providers.config import ProviderConfig
from lattice_runtime.workers.providers.openai_worker import OpenAIWorker
from lattice_runtime.workers.providers.policy import (
    ModelChoice,
    PolicyConfig,
    check_effort,
    check_provider,
    choose_model,
)

__all__ = ["build_provider_worker", "resolve_model"]

_DEFAULT_RISK: Risk = "medium"


def resolve_model(
    provider: str,
    *,
    model: str | None,
    effort: str | None,
    risk: Risk | None,
    policy: PolicyConfig | None = None,
) -> ModelChoice:
    """The model and effort a provider worker will use.

    With ``risk`` (the adaptive policy is on) the risk table fills what neither a flag nor
    configuration sets; without it the medium row does.

    Args:
        provider: ``anthropic`` or ``openai``.
        model: ``--model``, if given.
        effort: ``--effort``, if given.
        risk: The compiled task's risk when the adaptive policy is on, else ``None``.
        policy: Configured model and effort.

    Returns:
        The choice and its reason.

    Raises:
        ConfigError: Unknown provider or effort, or an empty model.
    """
    return choose_model(
        risk or _DEFAULT_RISK,
        provider=provider,
        explicit_model=model,
        explicit_effort=effort,
        config=policy,
    )


def build_provider_worker(
    provider: str,
    *,
    model: str | None,
    api_key: str,
    base_url: str | None = None,
    effort: str | None = None,
    risk: Risk | None = None,
    max_tokens: int = 8192,
    max_retries: int = 2,
    timeout_s: float = 300.0,
    policy: PolicyConfig | None = None,
) -> AnthropicWorker | OpenAIWorker:
    """A provider worker, ready for :func:`lattice_runtime.machine.run_task`.

    Args:
        provider: ``anthropic`` or ``openai``.
        model: ``--model`` (wins over configuration and the risk table).
        api_key: The key (the CLI reads ``ANTHROPIC_API_KEY`` / ``OPENAI_API_KEY``).
        base_url: ``--base-url``; ``None`` for the provider's default.
        effort: ``--effort`` (``low``, ``medium``, ``high``).
        risk: The task's risk when the adaptive model policy is on.
        max_tokens: Most output tokens per turn.
        max_retries: SDK retries on transient failures.
        timeout_s: Seconds per request.
        policy: Configured model and effort.

    Returns:
        The worker (it has ``last_usage`` after each turn).

    Raises:
        ConfigError: Unknown provider or effort, empty model or key, bad limits.
        WorkerError: The provider's SDK is not installed.
    """
    name = check_provider(provider)
    choice = resolve_model(name, model=model, effort=effort, risk=risk, policy=policy)
    config = ProviderConfig(
        model=choice.model,
        api_key=api_key,
        base_url=base_url,
        max_tokens=max_tokens,
        effort=check_effort(choice.effort),
        max_retries=max_retries,
        timeout_s=timeout_s,
    )
    if name == "anthropic":
        return AnthropicWorker(config)
    return OpenAIWorker(config)
