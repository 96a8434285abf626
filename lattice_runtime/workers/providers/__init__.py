"""Provider workers: the official Anthropic and OpenAI SDKs behind the worker protocol.

Install the ``providers`` extra for the SDKs; each is imported only by its worker module, when a
worker is made. See ``docs/lattice-providers.md``: the prompt split for caching
(:mod:`.prefix`), structured output (:mod:`.schema`), usage (:class:`ProviderUsage`), the
rate-limit window and the budget preflight (:mod:`.window`), and the model policy
(:mod:`.policy`).
"""

from lattice_runtime.workers.providers.anthropic_worker import AnthropicWorker, anthropic_usage
from lattice_runtime.workers.providers.build import build_provider_worker, resolve_model
from lattice_runtime.workers.providers.config import ProviderConfig
from lattice_runtime.workers.providers.openai_worker import OpenAIWorker, openai_usage
from lattice_runtime.workers.providers.policy import (
    EFFORTS,
    MODEL_TABLE,
    PROVIDERS,
    Effort,
    ModelChoice,
    PolicyConfig,
    Provider,
    choose_model,
)
from lattice_runtime.workers.providers.prefix import PromptParts, split_prompt
from lattice_runtime.workers.providers.schema import RESPONSE_SCHEMA, RESPONSE_SCHEMA_NAME
from lattice_runtime.workers.providers.usage import ProviderUsage
from lattice_runtime.workers.providers.window import (
    WindowReader,
    preflight,
    read_anthropic_window_usage,
    read_openai_window_usage,
    read_window_usage,
)

__all__ = [
    "EFFORTS",
    "MODEL_TABLE",
    "PROVIDERS",
    "RESPONSE_SCHEMA",
    "RESPONSE_SCHEMA_NAME",
    "AnthropicWorker",
    "Effort",
    "ModelChoice",
    "OpenAIWorker",
    "PolicyConfig",
    "PromptParts",
    "Provider",
    "ProviderConfig",
    "ProviderUsage",
    "WindowReader",
    "anthropic_usage",
    "build_provider_worker",
    "choose_model",
    "openai_usage",
    "preflight",
    "read_anthropic_window_usage",
    "read_openai_window_usage",
    "read_window_usage",
    "resolve_model",
    "split_prompt",
]
