"""The adaptive model policy, the worker factory the CLI calls, and the prompt split."""

from __future__ import annotations

from pathlib import Path

import pytest

from lattice_runtime.compile import compile_task
from lattice_runtime.errors import ConfigError
from lattice_runtime.protocol import PromptInput, render_prompt
from lattice_runtime.workers import WorkerTurn
from lattice_runtime.workers.providers import (
    MODEL_TABLE,
    AnthropicWorker,
    OpenAIWorker,
    PolicyConfig,
    ProviderConfig,
    build_provider_worker,
    choose_model,
    split_prompt,
)
from tests.lattice_runtime.fixture_repos import make_repo
from tests.lattice_runtime.provider_server import sample_turn


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_riskier_tasks_get_the_stronger_model_and_more_effort(provider: str) -> None:
    low = choose_model("low", provider=provider)
    medium = choose_model("medium", provider=provider)
    high = choose_model("high", provider=provider)
    assert (low.effort, medium.effort, high.effort) == ("low", "medium", "high")
    table = MODEL_TABLE[provider]  # type: ignore[index]
    assert [low.model, medium.model, high.model] == [table[r][0] for r in ("low", "medium", "high")]
    assert "the high-risk table" in high.reason


def test_explicit_flags_win_over_configuration_and_the_table() -> None:
    config = PolicyConfig(model="configured-model", effort="medium")
    choice = choose_model(
        "high",
        provider="anthropic",
        explicit_model="flag-model",
        explicit_effort="low",
        config=config,
    )
    assert (choice.model, choice.effort) == ("flag-model", "low")
    assert choice.reason == "model flag-model from the flag; effort low from the flag"


def test_configuration_wins_over_the_table_and_each_part_is_decided_alone() -> None:
    choice = choose_model("low", provider="openai", config=PolicyConfig(model="configured"))
    assert (choice.model, choice.effort) == ("configured", "low")
    assert (
        "from configuration" in choice.reason
        and "effort low from the low-risk table" in choice.reason
    )
    flagged = choose_model("high", provider="openai", explicit_effort="medium")
    assert flagged.model == MODEL_TABLE["openai"]["high"][0] and flagged.effort == "medium"


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"provider": "gemini"}, "unknown provider"),
        ({"provider": "openai", "explicit_effort": "extreme"}, "unknown effort"),
        ({"provider": "openai", "explicit_model": " "}, "model name is empty"),
    ],
)
def test_bad_policy_input_is_a_config_error(kwargs: dict[str, str], words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        choose_model("medium", **kwargs)  # type: ignore[arg-type]


def test_the_factory_makes_each_provider_worker_with_the_chosen_model() -> None:
    anthropic = build_provider_worker("anthropic", model=None, api_key="k", risk="low")
    openai = build_provider_worker(
        "openai", model="gpt-x", api_key="k", base_url="http://127.0.0.1:9/v1"
    )
    assert isinstance(anthropic, AnthropicWorker) and anthropic.name == "anthropic"
    assert anthropic.model == MODEL_TABLE["anthropic"]["low"][0]
    assert isinstance(openai, OpenAIWorker) and openai.name == "openai" and openai.model == "gpt-x"
    assert anthropic.last_usage is None and openai.last_headers is None


def test_without_a_risk_the_factory_uses_the_medium_row() -> None:
    worker = build_provider_worker("openai", model=None, api_key="k")
    assert worker.model == MODEL_TABLE["openai"]["medium"][0]


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"provider": "openai", "api_key": ""}, "no API key"),
        ({"provider": "mistral", "api_key": "k"}, "unknown provider"),
        ({"provider": "openai", "api_key": "k", "max_tokens": 0}, "max_tokens"),
    ],
)
def test_bad_factory_input_is_a_config_error(kwargs: dict[str, object], words: str) -> None:
    provider = str(kwargs.pop("provider"))
    with pytest.raises(ConfigError, match=words):
        build_provider_worker(provider, model=None, **kwargs)  # type: ignore[arg-type]


def test_the_api_key_never_shows_in_the_config_repr() -> None:
    assert "sk-secret" not in repr(ProviderConfig("m", "sk-secret"))


def test_the_split_keeps_every_line_of_the_prompt_and_a_task_independent_prefix(
    tmp_path: Path,
) -> None:
    turn = sample_turn(make_repo(tmp_path))
    parts = split_prompt(turn)
    assert parts.stable.count("## Rules") == 1 and "## Response format" in parts.stable
    assert turn.task.goal not in parts.stable and turn.task.goal in parts.dynamic
    section = parts.stable[parts.stable.index("## Rules") :]
    assert parts.dynamic.replace("## Pages", section + "## Pages", 1) == turn.prompt
    other = compile_task("Rename the audit log's record method to add.", tmp_path / "work")
    repair = render_prompt(PromptInput(other, "protocol_repair", (), "map", "bad json", 0, 1))
    later = WorkerTurn(2, "protocol_repair", repair, other, (), (), "bad json")
    assert split_prompt(later).stable == parts.stable


def test_a_prompt_without_the_protocol_section_is_sent_whole(tmp_path: Path) -> None:
    turn = sample_turn(make_repo(tmp_path))
    odd = WorkerTurn(1, "initial", "just a prompt\n", turn.task, ())
    assert split_prompt(odd).dynamic == "just a prompt\n"
