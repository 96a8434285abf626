"""The OpenAI worker against a local server that speaks Chat Completions."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from lattice_runtime.errors import WorkerError
from lattice_runtime.machine import RunOptions, RunState, run_task
from lattice_runtime.protocol import PatchProposal, parse_response
from lattice_runtime.workers.providers import (
    RESPONSE_SCHEMA,
    OpenAIWorker,
    ProviderConfig,
    ProviderUsage,
    preflight,
)
from tests.lattice_runtime.fixture_repos import PY_GOAL, make_repo, pytest_exit
from tests.lattice_runtime.provider_server import (
    CONTEXT_REQUEST,
    ERROR_BODY,
    OPENAI_LIMITS,
    Recorded,
    Reply,
    fake_provider,
    fixture_agent,
    sample_turn,
)

MODEL = "gpt-test-model"


def completion(content: str | None, *, cached: int = 0, cost: float | None = None) -> object:
    usage: dict[str, object] = {
        "prompt_tokens": 1500,
        "completion_tokens": 120,
        "total_tokens": 1620,
        "prompt_tokens_details": {"cached_tokens": cached},
        "completion_tokens_details": {"reasoning_tokens": 64},
    }
    if cost is not None:
        usage["cost"] = cost
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": MODEL,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": None},
                "finish_reason": "stop",
            }
        ],
        "usage": usage,
    }


def wrapped(response: object) -> str:
    return json.dumps({"response": response})


def agent_reply(request: Recorded, number: int) -> Reply:
    prompt = request.body["messages"][1]["content"]
    body = completion(wrapped(fixture_agent(prompt, number)), cached=0 if number == 1 else 1024)
    return Reply(200, body, OPENAI_LIMITS)


def worker(root: str) -> OpenAIWorker:
    config = ProviderConfig(MODEL, "sk-test", base_url=f"{root}/v1", max_tokens=4096, max_retries=0)
    return OpenAIWorker(config)


def test_a_run_with_the_openai_worker_passes_with_a_strict_schema_and_a_stable_prefix(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path)
    with fake_provider(agent_reply) as fake:
        openai = worker(fake.root)
        outcome = run_task(repo, RunOptions(goal=PY_GOAL), openai)
    assert outcome.state is RunState.PASSED, outcome.reason
    assert pytest_exit(repo) == 0
    first, second = fake.requests
    assert first.path == second.path == "/v1/chat/completions"
    assert first.headers["authorization"] == "Bearer sk-test"
    system, user = first.body["messages"]
    assert system["role"] == "system" and user["role"] == "user"
    assert system == second.body["messages"][0]  # byte-identical prefix, first in the request
    assert "## Rules" in system["content"] and "## Rules" not in user["content"]
    assert first.body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "lattice_response", "schema": RESPONSE_SCHEMA, "strict": True},
    }
    assert first.body["model"] == MODEL and first.body["max_completion_tokens"] == 4096
    assert "reasoning_effort" not in first.body
    assert openai.last_usage == ProviderUsage(1500, 1024, 120, 64, None, 0)


def test_a_reported_cost_is_read_and_effort_is_sent(tmp_path: Path) -> None:
    turn = sample_turn(make_repo(tmp_path))
    body = completion(wrapped(CONTEXT_REQUEST), cost=0.0042)
    with fake_provider(lambda _r, _n: Reply(200, body)) as fake:
        config = ProviderConfig(MODEL, "k", base_url=f"{fake.root}/v1", effort="low", max_retries=0)
        openai = OpenAIWorker(config)
        openai.respond(turn)
    assert fake.requests[0].body["reasoning_effort"] == "low"
    assert openai.last_usage is not None
    assert openai.last_usage.cost_usd == 0.0042
    assert openai.last_usage.to_wire()["costUsd"] == 0.0042


def test_an_unwrapped_plain_json_answer_is_passed_on_for_the_parser(tmp_path: Path) -> None:
    turn = sample_turn(make_repo(tmp_path))
    patch = {
        "kind": "patch",
        "patch": {
            "summary": "s",
            "changes": [{"operation": "create_file", "path": "a.py", "content": "x = 1\n"}],
            "verificationCommands": [],
        },
    }
    with fake_provider(lambda _r, _n: Reply(200, completion(json.dumps(patch)))) as fake:
        answer = worker(fake.root).respond(turn)
    assert isinstance(parse_response(answer).response, PatchProposal)


def test_a_non_json_answer_reaches_the_runtime_unchanged(tmp_path: Path) -> None:
    turn = sample_turn(make_repo(tmp_path))
    with fake_provider(lambda _r, _n: Reply(200, completion("I cannot help"))) as fake:
        assert worker(fake.root).respond(turn) == "I cannot help"


@pytest.mark.parametrize(
    ("status", "words"),
    [(401, "Check the API key"), (429, "rate limit"), (500, "provider failed")],
)
def test_an_error_status_is_a_worker_error_naming_it(
    tmp_path: Path, status: int, words: str
) -> None:
    turn = sample_turn(make_repo(tmp_path))
    with fake_provider(lambda _r, _n: Reply(status, ERROR_BODY, OPENAI_LIMITS)) as fake:
        openai = worker(fake.root)
        with pytest.raises(WorkerError) as caught:
            openai.respond(turn)
    assert f"openai returned HTTP {status}: " in caught.value.message
    assert "boom from the fake" in caught.value.message
    assert words in caught.value.hint
    assert len(fake.requests) == 1  # max_retries=0: no retry
    assert openai.window_usage(openai.last_headers or {}) == 30.0


def test_no_choice_is_a_worker_error(tmp_path: Path) -> None:
    turn = sample_turn(make_repo(tmp_path))
    body = {**completion(None), "choices": []}  # type: ignore[dict-item]
    with (
        fake_provider(lambda _r, _n: Reply(200, body)) as fake,
        pytest.raises(WorkerError, match="no choice"),
    ):
        worker(fake.root).respond(turn)


def test_preflight_reads_the_openai_window_and_fails_closed_without_headers() -> None:
    body = completion("{}")
    with fake_provider(lambda _r, _n: Reply(200, body, OPENAI_LIMITS)) as fake:
        decision = preflight(worker(fake.root), 7)
    assert decision.allowed and "used 30 + run 7" in decision.reason
    assert fake.requests[0].body["max_completion_tokens"] == 16
    with fake_provider(lambda _r, _n: Reply(200, body)) as fake:
        refused = preflight(worker(fake.root), 0)
    assert not refused.allowed and "missing or malformed" in refused.reason


def test_a_missing_sdk_is_a_worker_error_naming_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(WorkerError, match="openai SDK is not installed"):
        worker("http://127.0.0.1:9")


def test_an_unreachable_server_is_a_worker_error(tmp_path: Path) -> None:
    turn = sample_turn(make_repo(tmp_path))
    with fake_provider(agent_reply) as fake:
        root = fake.root
    with pytest.raises(WorkerError, match="cannot reach openai"):
        worker(root).respond(turn)
