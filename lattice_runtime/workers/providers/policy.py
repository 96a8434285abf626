"""The adaptive model policy (opt-in): model and effort from the task's risk.

Precedence, highest first: an explicit flag (``--model``, ``--effort``), then configuration
(:class:`PolicyConfig`), then the risk table. Each of model and effort is decided on its own,
so ``--model`` with no ``--effort`` still takes the effort from configuration or the table.

=========  ==========================  ==============================  ======
risk       anthropic                   openai                          effort
=========  ==========================  ==============================  ======
low        ``claude-haiku-4-5``        ``gpt-5.4-mini``                low
medium     ``claude-sonnet-4-6``       ``gpt-5.5``                     medium
high       ``claude-opus-4-8``         ``gpt-5.5``                     high
=========  ==========================  ==============================  ======
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal, get_args

from lattice_runtime.compile.task import Risk
from lattice_runtime.errors import ConfigError

__all__ = [
    "EFFORTS",
    "MODEL_TABLE",
    "PROVIDERS",
    "Effort",
    "ModelChoice",
    "PolicyConfig",
    "Provider",
    "check_effort",
    "check_provider",
    "choose_model",
]

Provider = Literal["anthropic", "openai"]
PROVIDERS: Final[tuple[str, ...]] = get_args(Provider)

Effort = Literal["low", "medium", "high"]
EFFORTS: Final[tuple[str, ...]] = get_args(Effort)

_PROVIDER_NAMES: Final[dict[str, Provider]] = {"anthropic": "anthropic", "openai": "openai"}
_EFFORT_NAMES: Final[dict[str, Effort]] = {"low": "low", "medium": "medium", "high": "high"}

MODEL_TABLE: Final[dict[Provider, dict[Risk, tuple[str, Effort]]]] = {
    "anthropic": {
        "low": ("claude-haiku-4-5", "low"),
        "medium": ("claude-sonnet-4-6", "medium"),
        "high": ("claude-opus-4-8", "high"),
    },
    "openai": {
        "low": ("gpt-5.4-mini", "low"),
        "medium": ("gpt-5.5", "medium"),
        "high": ("gpt-5.5", "high"),
    },
}
"""Risk -> (model, effort), per provider: stronger model and more effort for riskier tasks."""


@dataclass(frozen=True, slots=True)
class PolicyConfig:
    """Configured model and effort; each one set here beats the risk table.

    Attributes:
        model: The configured model, or ``None`` to let the table decide.
        effort: The configured effort, or ``None`` to let the table decide.
    """

    model: str | None = None
    effort: Effort | None = None


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """The model and effort a run uses, and why.

    Attributes:
        model: The provider's model name.
        effort: The reasoning effort.
        reason: One line naming where each came from (flag, configuration or risk table).
    """

    model: str
    effort: Effort
    reason: str


def check_provider(provider: str) -> Provider:
    """``provider`` as a known provider name.

    Args:
        provider: ``anthropic`` or ``openai``.

    Returns:
        The name, typed.

    Raises:
        ConfigError: Another name.
    """
    known = _PROVIDER_NAMES.get(provider)
    if known is None:
        raise ConfigError(
            f"unknown provider {provider!r}", hint=f"Use one of: {', '.join(PROVIDERS)}."
        )
    return known


def check_effort(effort: str) -> Effort:
    """``effort`` as a known effort level.

    Args:
        effort: ``low``, ``medium`` or ``high``.

    Returns:
        The level, typed.

    Raises:
        ConfigError: Another value.
    """
    known = _EFFORT_NAMES.get(effort)
    if known is None:
        raise ConfigError(f"unknown effort {effort!r}", hint=f"Use one of: {', '.join(EFFORTS)}.")
    return known


def choose_model(
    risk: Risk,
    *,
    provider: str,
    explicit_model: str | None = None,
    explicit_effort: str | None = None,
    config: PolicyConfig | None = None,
) -> ModelChoice:
    """Choose the model and effort for a task of ``risk``.

    Args:
        risk: The compiled task's risk.
        provider: ``anthropic`` or ``openai``.
        explicit_model: The ``--model`` flag, if given (always wins).
        explicit_effort: The ``--effort`` flag, if given (always wins).
        config: Configured model and effort (win over the table).

    Returns:
        The choice and the reason for it.

    Raises:
        ConfigError: Unknown provider or effort, or an empty model name.
    """
    table_model, table_effort = MODEL_TABLE[check_provider(provider)][risk]
    configured = config or PolicyConfig()
    model, model_from = _pick(
        explicit_model, configured.model, table_model, f"the {risk}-risk table"
    )
    effort_text, effort_from = _pick(
        explicit_effort, configured.effort, table_effort, f"the {risk}-risk table"
    )
    if not model.strip():
        raise ConfigError("the model name is empty", hint="Pass --model with a model name.")
    return ModelChoice(
        model,
        check_effort(effort_text),
        f"model {model} from {model_from}; effort {effort_text} from {effort_from}",
    )


def _pick(flag: str | None, configured: str | None, table: str, table_name: str) -> tuple[str, str]:
    if flag is not None:
        return flag, "the flag"
    if configured is not None:
        return configured, "configuration"
    return table, table_name
