"""The Anthropic worker against a local server that speaks the Messages API."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lattice_runtime.cli import app
from lattice_runtime.errors import WorkerError
from lattice_runtime.machine import RunOptions, RunState, load_run, run_task
from lattice_runtime.protocol import ContextRequest, parse_response
from lattice_runtime.workers.providers import (
    RESPONSE_SCHEMA,
    AnthropicWorker,
    ProviderConfig,
    ProviderUsage,
    preflight,
)
from tests.lattice_runtime.fixture_repos import PY_GOAL, make_repo, pytest_exit
from tests.lattice_runtime.provider_server import (
    ANTHROPIC_LIMITS,
    CONTEXT_REQUEST,
    ERROR_BODY,
    SERVICE_PATH,
    Recorded,
    Reply,
    fake_provider,
    fixture_agent,
    fixture_patch,
    sample_turn,
)

MODEL = "claude-test-model"


def message(response: object, *, cache_read: int = 0) -> dict[str, object]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "lattice_response",
                "input": {"response": response},
            }
        ],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {
            "input_tokens": 300,
            "cache_read_input_tokens": cache_read,
            "cache_creation_input_tokens": 1200 - cache_read,
            "output_tokens": 90,
            "output_tokens_details": {"thinking_tokens": 40},
        },
    }


def agent_reply(request: Recorded, number: int) -> Reply:
    prompt = request.body["messages"][0]["content"]
    cache_read = 0 if number == 1 else 1200
    return Reply(
        200, message(fixture_agent(prompt, number), cache_read=cache_read), ANTHROPIC_LIMITS
    )


def worker(root: str, **limits: int) -> AnthropicWorker:
    config = ProviderConfig(
        MODEL, "sk-test", base_url=root, max_tokens=2048, max_retries=0, **limits
    )
    return AnthropicWorker(config)


def test_a_run_with_the_anthropic_worker_passes_and_caches_a_byte_identical_prefix(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path)
    with fake_provider(agent_reply) as fake:
        anthropic = worker(fake.root)
        outcome = run_task(repo, RunOptions(goal=PY_GOAL), anthropic)
    assert outcome.state is RunState.PASSED, outcome.reason
    assert pytest_exit(repo) == 0
    usages = [turn.usage for turn in load_run(repo, outcome.record.run_id).telemetry.turns]
    assert all(isinstance(usage, ProviderUsage) for usage in usages) and len(usages) == 2
    assert outcome.to_wire()["telemetry"]["usage"]["inputTokens"] == sum(  # type: ignore[index]
        usage.input_tokens for usage in usages if usage is not None
    )
    first, second = fake.requests
    assert first.path == second.path == "/v1/messages"
    key = first.headers.get("x-api-key") or first.headers["authorization"].removeprefix("Bearer ")
    assert key == "sk-test"
    assert first.body["system"] == second.body["system"]
    [system] = first.body["system"]
    assert system["cache_control"] == {"type": "ephemeral"}
    assert "## Rules" in system["text"] and "## Response format" in system["text"]
    user = first.body["messages"][0]["content"]
    assert "## Rules" not in user and "## Pages" in user and PY_GOAL in user
    assert second.body["messages"][0]["content"] != user  # the dynamic part moves on
    assert first.body["model"] == MODEL and first.body["max_tokens"] == 2048
    [tool] = first.body["tools"]
    assert tool["name"] == "lattice_response" and tool["strict"] is True
    assert tool["input_schema"] == RESPONSE_SCHEMA
    assert first.body["tool_choice"] == {"type": "tool", "name": "lattice_response"}
    assert anthropic.last_usage == ProviderUsage(1500, 1200, 90, 40, None, 0)


def test_the_first_turn_usage_counts_cache_writes_as_input(tmp_path: Path) -> None:
    turn = sample_turn(make_repo(tmp_path))
    with fake_provider(agent_reply) as fake:
        anthropic = worker(fake.root)
        answer = anthropic.respond(turn)
    assert isinstance(parse_response(answer).response, ContextRequest)
    usage = anthropic.last_usage
    assert usage == ProviderUsage(1500, 0, 90, 40, None, 1200)
    assert usage.to_wire() == {
        "inputTokens": 1500,
        "cachedInputTokens": 0,
        "cacheWriteTokens": 1200,
        "outputTokens": 90,
        "reasoningTokens": 40,
        "costUsd": None,
    }


def test_a_null_symbol_forced_by_the_schema_is_left_out_of_the_answer(tmp_path: Path) -> None:
    turn = sample_turn(make_repo(tmp_path))
    with fake_provider(agent_reply) as fake:
        answer = worker(fake.root).respond(turn)
    assert answer == (
        '{"kind": "context_request", "requests": [{"reason": "the token store", '
        '"pathHint": "src/resetkit/tokens.py"}]}'
    )


def test_effort_is_sent_as_output_config_only_when_set(tmp_path: Path) -> None:
    turn = sample_turn(make_repo(tmp_path))
    with fake_provider(lambda _r, _n: Reply(200, message(CONTEXT_REQUEST))) as fake:
        worker(fake.root).respond(turn)
        config = ProviderConfig(MODEL, "k", base_url=fake.root, effort="high", max_retries=0)
        AnthropicWorker(config).respond(turn)
    assert "output_config" not in fake.requests[0].body
    assert fake.requests[1].body["output_config"] == {"effort": "high"}


@pytest.mark.parametrize(
    ("status", "words"),
    [(401, "Check the API key"), (429, "rate limit"), (500, "provider failed")],
)
def test_an_error_status_is_a_worker_error_naming_it(
    tmp_path: Path, status: int, words: str
) -> None:
    turn = sample_turn(make_repo(tmp_path))
    with fake_provider(lambda _r, _n: Reply(status, ERROR_BODY, ANTHROPIC_LIMITS)) as fake:
        anthropic = worker(fake.root)
        with pytest.raises(WorkerError) as caught:
            anthropic.respond(turn)
    assert f"anthropic returned HTTP {status}: " in caught.value.message
    assert "boom from the fake" in caught.value.message
    assert words in caught.value.hint
    assert len(fake.requests) == 1  # max_retries=0: no retry
    assert anthropic.last_usage is None
    assert anthropic.window_usage(anthropic.last_headers or {}) == 25.0


def test_an_unreachable_server_is_a_worker_error(tmp_path: Path) -> None:
    turn = sample_turn(make_repo(tmp_path))
    with fake_provider(agent_reply) as fake:
        root = fake.root
    with pytest.raises(WorkerError, match="cannot reach anthropic"):
        worker(root).respond(turn)


def test_preflight_probes_the_window_and_applies_the_guard() -> None:
    with fake_provider(lambda _r, _n: Reply(200, message(None), ANTHROPIC_LIMITS)) as fake:
        anthropic = worker(fake.root)
        allowed = preflight(anthropic, 8)
        refused = preflight(anthropic, 11, use_last=True)
    assert allowed.allowed and "used 25 + run 8" in allowed.reason
    assert not refused.allowed and refused.hard_ceiling == 35.0
    assert len(fake.requests) == 1  # use_last read the probe's headers
    probe = fake.requests[0].body
    assert probe["max_tokens"] == 1 and probe["model"] == MODEL


def test_preflight_refuses_when_the_headers_are_malformed() -> None:
    broken = {**ANTHROPIC_LIMITS, "anthropic-ratelimit-requests-remaining": "lots"}
    with fake_provider(lambda _r, _n: Reply(200, message(None), broken)) as fake:
        decision = preflight(worker(fake.root), 1)
    assert not decision.allowed and "malformed" in decision.reason


def test_preflight_refuses_when_the_probe_fails() -> None:
    with fake_provider(lambda _r, _n: Reply(401, ERROR_BODY)) as fake:
        decision = preflight(worker(fake.root), 1)
    assert not decision.allowed and "HTTP 401" in decision.reason


def test_a_missing_sdk_is_a_worker_error_naming_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)
    with pytest.raises(WorkerError, match="anthropic SDK is not installed") as caught:
        worker("http://127.0.0.1:9")
    assert "[providers]" in caught.value.hint


def test_a_failed_turn_clears_the_last_usage(tmp_path: Path) -> None:
    turn = sample_turn(make_repo(tmp_path))

    def answer(_request: Recorded, number: int) -> Reply:
        return Reply(200, message(CONTEXT_REQUEST)) if number == 1 else Reply(500, ERROR_BODY)

    with fake_provider(answer) as fake:
        anthropic = worker(fake.root)
        anthropic.respond(turn)
        assert anthropic.last_usage is not None
        with pytest.raises(WorkerError):
            anthropic.respond(turn)
    assert anthropic.last_usage is None


def test_a_text_answer_instead_of_the_tool_goes_to_the_parser_as_text(tmp_path: Path) -> None:
    turn = sample_turn(make_repo(tmp_path))
    body = {**message(None), "content": [{"type": "text", "text": "Sure! Here is a patch"}]}
    with fake_provider(lambda _r, _n: Reply(200, body)) as fake:
        assert worker(fake.root).respond(turn) == "Sure! Here is a patch"


def test_a_bad_request_status_points_at_the_model_and_limits(tmp_path: Path) -> None:
    turn = sample_turn(make_repo(tmp_path))
    with (
        fake_provider(lambda _r, _n: Reply(400, ERROR_BODY)) as fake,
        pytest.raises(WorkerError, match="HTTP 400") as caught,
    ):
        worker(fake.root).respond(turn)
    assert "model name" in caught.value.hint


def test_lattice_run_with_the_anthropic_worker_reads_its_key_and_flags(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    with fake_provider(agent_reply) as fake:
        args = ["run", PY_GOAL, "--worker", "anthropic", "--repo", str(repo), "--json"]
        args += ["--base-url", fake.root, "--model", MODEL, "--effort", "low"]
        missing = CliRunner().invoke(app, args, env={"ANTHROPIC_API_KEY": ""})
        assert missing.exit_code == 2 and "ANTHROPIC_API_KEY" in missing.stderr
        result = CliRunner().invoke(app, args, env={"ANTHROPIC_API_KEY": "sk-cli"})
    assert result.exit_code == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["state"] == "PASSED"
    assert report["telemetry"]["usage"]["inputTokens"] > 0
    assert fake.requests[0].body["model"] == MODEL


def test_the_budget_guard_refuses_a_run_that_could_take_too_much_of_the_window(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path)

    def probe_or_patch(request: Recorded, number: int) -> Reply:
        content = request.body["messages"][0]["content"]
        prompt = content if isinstance(content, str) else json.dumps(content)
        if SERVICE_PATH not in prompt:  # the guard's probe, not a turn
            return Reply(200, message(CONTEXT_REQUEST), ANTHROPIC_LIMITS)
        return Reply(200, message(fixture_patch(prompt)), ANTHROPIC_LIMITS)

    with fake_provider(probe_or_patch) as fake:
        args = ["run", PY_GOAL, "--worker", "anthropic", "--repo", str(repo), "--json"]
        args += ["--base-url", fake.root, "--model", MODEL]
        env = {"ANTHROPIC_API_KEY": "sk-cli"}
        refused = CliRunner().invoke(app, [*args, "--budget-increase", "11"], env=env)
        assert refused.exit_code == 2, refused.stdout
        assert "error [lattice.budget_refused]" in refused.stderr
        assert not (repo / ".lattice" / "runs").exists()
        allowed = CliRunner().invoke(app, [*args, "--budget-increase", "5"], env=env)
    assert allowed.exit_code == 0, allowed.stdout + allowed.stderr
    assert json.loads(allowed.stdout)["state"] == "PASSED"
