"""The published JSON Schema agrees with the protocol's one parser on real answers."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from lattice_runtime.protocol import ProtocolViolation, parse_response, response_schema

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def fixture_answers() -> list[object]:
    answers = []
    for name in ("reset-token-py", "reset-token-js"):
        script = json.loads((FIXTURES / name / "task.json").read_text())["mock"]
        text = json.dumps(script).replace("@path:", "")
        for item in json.loads(text):
            for change in item.get("patch", {}).get("changes", []):
                change["editHandle"] = "E3"
            answers.append(item)
    return answers


VALID = [
    {"kind": "context_request", "requests": [{"reason": "r", "symbol": "AuditLog"}]},
    {"kind": "context_request", "requests": [{"reason": "r", "pathHint": "src/a.py"}]},
    {
        "kind": "patch",
        "patch": {
            "summary": "s",
            "changes": [
                {"operation": "create_file", "path": "src/new.py", "content": ""},
                {"editHandle": "E2", "operation": "delete_file"},
            ],
            "verificationCommands": [],
        },
    },
    *fixture_answers(),
]

INVALID = [
    {"kind": "context_request", "requests": []},
    {"kind": "context_request", "requests": [{"reason": "r"}]},
    {"kind": "patch", "patch": {"summary": "s", "changes": [], "verificationCommands": []}},
    {"kind": "context_request", "requests": [{"reason": "r", "symbol": "x"}], "extra": 1},
    {
        "kind": "patch",
        "patch": {
            "summary": "s",
            "changes": [{"editHandle": "E0", "operation": "delete_file"}],
            "verificationCommands": [],
        },
    },
    {"kind": "explain"},
]


@pytest.mark.parametrize("answer", VALID)
def test_answers_the_parser_accepts_match_the_schema(answer: object) -> None:
    parse_response(json.dumps(answer))
    jsonschema.validate(answer, response_schema())


@pytest.mark.parametrize("answer", INVALID)
def test_answers_the_parser_refuses_do_not_match_the_schema(answer: object) -> None:
    with pytest.raises(ProtocolViolation):
        parse_response(json.dumps(answer))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(answer, response_schema())


def test_the_schema_itself_is_a_valid_draft_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(response_schema())
