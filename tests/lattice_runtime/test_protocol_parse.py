"""parse_response: every accepted shape, every refusal class, diagnostics, strictness."""

from __future__ import annotations

import copy
import hashlib
import json

import pytest

from lattice_runtime.errors import LatticeError, ProtocolError
from lattice_runtime.protocol import (
    MAX_ITEMS,
    MAX_RAW_CHARS,
    PROTOCOL_REASONS,
    ContextRequest,
    ContextRequestItem,
    CreateFile,
    DeleteFile,
    PatchProposal,
    ProtocolViolation,
    ReplaceFile,
    Replacement,
    ReplaceText,
    parse_response,
)

PATCH: dict[str, object] = {
    "kind": "patch",
    "patch": {
        "summary": "consume the token once",
        "changes": [
            {
                "editHandle": "E1",
                "operation": "replace_text",
                "replacements": [{"oldContent": "return token", "newContent": "return None"}],
            },
            {"editHandle": "E2", "operation": "replace_file", "replacementContent": "x = 1\n"},
            {"editHandle": "E3", "operation": "delete_file"},
            {"operation": "create_file", "path": "src/new.py", "content": ""},
        ],
        "verificationCommands": ["pytest", "ruff check"],
    },
}
REQUEST: dict[str, object] = {
    "kind": "context_request",
    "requests": [
        {"reason": "the caller", "pathHint": "src/auth.py"},
        {"reason": "the model", "symbol": "Token.consume"},
        {"reason": "both", "pathHint": "src/", "symbol": "audit"},
    ],
}


def refusal(raw: str) -> ProtocolViolation:
    with pytest.raises(ProtocolViolation) as caught:
        parse_response(raw)
    return caught.value


def patch_with(**changes: object) -> dict[str, object]:
    """PATCH with top-level patch fields replaced."""
    message = copy.deepcopy(PATCH)
    body = message["patch"]
    assert isinstance(body, dict)
    body.update(changes)
    return message


def test_a_patch_with_all_four_operations_parses_to_the_typed_proposal() -> None:
    parsed = parse_response(json.dumps(PATCH))
    assert parsed.response == PatchProposal(
        summary="consume the token once",
        changes=(
            ReplaceText("E1", (Replacement("return token", "return None"),)),
            ReplaceFile("E2", "x = 1\n"),
            DeleteFile("E3"),
            CreateFile("src/new.py", ""),
        ),
        verification_commands=("pytest", "ruff check"),
    )
    assert parsed.diagnostics.detected_shape == "patch"
    assert parsed.diagnostics.normalization == "none"
    assert parsed.diagnostics.reason is None
    assert parsed.diagnostics.validation_error is None
    assert parsed.diagnostics.accepted


def test_a_context_request_parses_with_path_hints_symbols_or_both() -> None:
    parsed = parse_response(json.dumps(REQUEST))
    assert parsed.response == ContextRequest(
        (
            ContextRequestItem("the caller", path_hint="src/auth.py"),
            ContextRequestItem("the model", symbol="Token.consume"),
            ContextRequestItem("both", path_hint="src/", symbol="audit"),
        )
    )
    assert parsed.diagnostics.detected_shape == "context_request"


@pytest.mark.parametrize(("on_message", "on_patch"), [(True, False), (False, True), (True, True)])
def test_the_seed_form_with_schema_version_1_is_accepted_and_recorded(
    on_message: bool, on_patch: bool
) -> None:
    message = copy.deepcopy(PATCH)
    if on_message:
        message["schemaVersion"] = 1
    if on_patch:
        body = message["patch"]
        assert isinstance(body, dict)
        body["schemaVersion"] = 1
    parsed = parse_response(json.dumps(message))
    assert parsed.response == parse_response(json.dumps(PATCH)).response
    assert parsed.diagnostics.normalization == "seed_v1"


def test_a_seed_v1_context_request_and_protocol_version_5_are_accepted() -> None:
    seed = parse_response(json.dumps({**REQUEST, "schemaVersion": 1}))
    assert seed.diagnostics.normalization == "seed_v1"
    v5 = parse_response(json.dumps({**REQUEST, "protocolVersion": 5}))
    assert v5.diagnostics.normalization == "protocol_v5"
    assert seed.response == v5.response == parse_response(json.dumps(REQUEST)).response


@pytest.mark.parametrize(
    "message",
    [
        {**PATCH, "schemaVersion": 2},
        {**PATCH, "schemaVersion": 0},
        {**PATCH, "schemaVersion": "1"},
        {**PATCH, "schemaVersion": True},
        {**PATCH, "schemaVersion": 1.0},
        {**PATCH, "protocolVersion": 4},
        patch_with(schemaVersion=5),
        {**REQUEST, "schemaVersion": None},
    ],
)
def test_any_other_schema_version_fails_closed_without_repair(message: object) -> None:
    error = refusal(json.dumps(message))
    assert (error.reason, error.repairable) == ("schema_version", False)


def test_a_wrong_version_is_refused_as_version_even_with_other_schema_errors() -> None:
    error = refusal(json.dumps({**PATCH, "schemaVersion": 3, "extra": 1}))
    assert error.reason == "schema_version"


def test_surrounding_whitespace_and_one_json_code_fence_are_stripped_and_recorded() -> None:
    text = json.dumps(PATCH, indent=2)
    plain = parse_response(f"\n  {text}\n\n").diagnostics
    assert plain.normalization == "stripped_whitespace"
    fenced = parse_response(f"```json\n{text}\n```")
    assert fenced.diagnostics.normalization == "stripped_code_fence"
    assert fenced.response == parse_response(text).response
    both = parse_response(f"\n```\n{text}\n```\n").diagnostics
    assert both.normalization == "stripped_whitespace+stripped_code_fence"
    seeded = parse_response(f"```json\n{json.dumps({**PATCH, 'schemaVersion': 1})}\n```")
    assert seeded.diagnostics.normalization == "stripped_code_fence+seed_v1"


def test_backticks_inside_the_fenced_json_are_content_not_a_second_fence() -> None:
    message = patch_with(summary="document ```json blocks```")
    parsed = parse_response(f"```json\n{json.dumps(message)}\n```")
    assert isinstance(parsed.response, PatchProposal)
    assert parsed.response.summary == "document ```json blocks```"


@pytest.mark.parametrize(
    "raw",
    [
        "Here is the patch:\n```json\n" + json.dumps(PATCH) + "\n```",
        "```json\n" + json.dumps(PATCH) + "\n```\n```json\n" + json.dumps(REQUEST) + "\n```",
        "````json\n```json\n" + json.dumps(PATCH) + "\n```\n````",
        "```python\n" + json.dumps(PATCH) + "\n```",
        "```json\n" + json.dumps(PATCH),
    ],
)
def test_prose_several_fences_or_an_unclosed_fence_are_not_normalized(raw: str) -> None:
    error = refusal(raw)
    assert (error.reason, error.repairable) == ("malformed_json", True)
    assert error.diagnostics.detected_shape == "not_json"


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "   \n",
        '{"kind": "patch",}',
        '{"kind": "patch"',
        "{'kind': 'patch'}",
        json.dumps(REQUEST) + json.dumps(REQUEST),
        json.dumps(REQUEST) + "\n" + json.dumps(PATCH),
        '{"kind": "context_request", "requests": [{"reason": "x", "symbol": NaN}]}',
        "[" * 100_000 + "]" * 100_000,
        '{"kind": ' + "1" * 5000 + "}",
    ],
)
def test_malformed_json_fails_closed_and_may_be_repaired(raw: str) -> None:
    error = refusal(raw)
    assert (error.reason, error.repairable) == ("malformed_json", True)
    assert error.code == "lattice.protocol_invalid"
    assert error.diagnostics.detected_shape == "not_json"
    assert error.diagnostics.validation_error == error.message


def test_a_repeated_key_is_refused_not_silently_last_wins() -> None:
    raw = (
        '{"kind": "patch", "kind": "context_request", "requests": [{"reason": "r", "symbol": "s"}]}'
    )
    error = refusal(raw)
    assert (error.reason, error.repairable) == ("duplicate_key", True)


@pytest.mark.parametrize("value", [[], "patch", 3, None, True])
def test_a_json_value_that_is_not_an_object_is_a_schema_error(value: object) -> None:
    error = refusal(json.dumps(value))
    assert (error.reason, error.repairable) == ("schema", True)
    assert error.diagnostics.detected_shape == "not_object"


def test_both_branches_at_once_are_refused_as_both() -> None:
    cases = [
        {**PATCH, "requests": REQUEST["requests"]},
        {**REQUEST, "patch": PATCH["patch"]},
        {"kind": "something", "requests": REQUEST["requests"], "patch": PATCH["patch"]},
        {"kind": "context_request", "patch": PATCH["patch"]},
        {"kind": "patch", "requests": REQUEST["requests"]},
    ]
    for message in cases:
        error = refusal(json.dumps(message))
        assert (error.reason, error.repairable) == ("both_branches", True)
        assert error.diagnostics.detected_shape == "both"


@pytest.mark.parametrize("kind", ["diff", "PATCH", "context-request", ""])
def test_an_unknown_kind_is_refused_and_repairable(kind: str) -> None:
    error = refusal(json.dumps({"kind": kind, "changes": []}))
    assert (error.reason, error.repairable) == ("unknown_kind", True)
    assert error.diagnostics.detected_shape == "unknown"


@pytest.mark.parametrize("operation", ["rename_file", "replace_lines", "REPLACE_TEXT"])
def test_an_unknown_operation_is_refused_and_repairable(operation: str) -> None:
    message = patch_with(changes=[{"editHandle": "E1", "operation": operation}])
    error = refusal(json.dumps(message))
    assert (error.reason, error.repairable) == ("unknown_operation", True)
    assert "patch.changes[0]" in error.message


SCHEMA_ERRORS: list[object] = [
    {"patch": PATCH["patch"]},  # no kind
    {**PATCH, "kind": 7},
    {"kind": "patch"},
    {"kind": "context_request"},
    {"kind": "context_request", "requests": []},
    {"kind": "context_request", "requests": [{"reason": "no hint"}]},
    {"kind": "context_request", "requests": [{"reason": "", "symbol": "s"}]},
    {"kind": "context_request", "requests": [{"reason": "   ", "symbol": "s"}]},
    {"kind": "context_request", "requests": [{"reason": "r", "symbol": ""}]},
    {"kind": "context_request", "requests": [{"reason": "r", "pathHint": None}]},
    {"kind": "context_request", "requests": [{"reason": "r", "pathHint": 3}]},
    {"kind": "context_request", "requests": {"reason": "r", "symbol": "s"}},
    {"kind": "context_request", "requests": ["src/a.py"]},
    {"kind": "patch", "patch": []},
    patch_with(changes=[]),
    patch_with(changes={}),
    patch_with(summary=None),
    patch_with(verificationCommands="pytest"),
    patch_with(verificationCommands=[""]),
    patch_with(verificationCommands=[["pytest"]]),
    patch_with(changes=["E1"]),
    patch_with(changes=[{"editHandle": "E1"}]),
    patch_with(changes=[{"editHandle": "E1", "operation": 1}]),
    patch_with(changes=[{"editHandle": "E1", "operation": "replace_text", "replacements": []}]),
    patch_with(
        changes=[
            {
                "editHandle": "E1",
                "operation": "replace_text",
                "replacements": [{"oldContent": "", "newContent": "x"}],
            }
        ]
    ),
    patch_with(
        changes=[
            {
                "editHandle": "E1",
                "operation": "replace_text",
                "replacements": [{"oldContent": "a"}],
            }
        ]
    ),
    patch_with(changes=[{"editHandle": "E1", "operation": "replace_file"}]),
    patch_with(
        changes=[{"editHandle": "E1", "operation": "replace_file", "replacementContent": 1}]
    ),
    patch_with(changes=[{"operation": "delete_file"}]),
    patch_with(
        changes=[{"editHandle": "E1", "operation": "create_file", "path": "a", "content": ""}]
    ),
    patch_with(changes=[{"operation": "create_file", "path": "", "content": ""}]),
    patch_with(changes=[{"operation": "create_file", "path": "a.py"}]),
    patch_with(changes=[{"operation": "delete_file", "path": "a.py"}]),
]


@pytest.mark.parametrize("message", SCHEMA_ERRORS)
def test_missing_keys_wrong_types_and_empty_values_are_repairable_schema_errors(
    message: object,
) -> None:
    error = refusal(json.dumps(message))
    assert (error.reason, error.repairable) == ("schema", True)
    assert error.diagnostics.validation_error == error.message


@pytest.mark.parametrize(
    "handle", ["E0", "E01", "e1", "1", "E", "E1 ", "EE1", "E\u0661", "path.py"]
)
def test_an_edit_handle_must_look_like_e_and_a_positive_number(handle: str) -> None:
    message = patch_with(changes=[{"editHandle": handle, "operation": "delete_file"}])
    error = refusal(json.dumps(message))
    assert (error.reason, error.repairable) == ("schema", True)


def test_large_handle_numbers_are_still_handles() -> None:
    message = patch_with(changes=[{"editHandle": "E120", "operation": "delete_file"}])
    assert parse_response(json.dumps(message)).response == PatchProposal(
        "consume the token once", (DeleteFile("E120"),), ("pytest", "ruff check")
    )


def test_the_same_handle_in_two_changes_is_refused_without_repair() -> None:
    message = patch_with(
        changes=[
            {"editHandle": "E2", "operation": "replace_file", "replacementContent": ""},
            {"editHandle": "E2", "operation": "delete_file"},
        ]
    )
    error = refusal(json.dumps(message))
    assert (error.reason, error.repairable) == ("duplicate_handle", False)
    assert error.diagnostics.detected_shape == "patch"


@pytest.mark.parametrize(("first", "second"), [("a/b.py", "a/b.py"), ("./a/b.py", "a/./b.py")])
def test_two_creates_of_one_path_are_refused_without_repair(first: str, second: str) -> None:
    message = patch_with(
        changes=[
            {"operation": "create_file", "path": first, "content": "1"},
            {"operation": "create_file", "path": second, "content": "2"},
        ]
    )
    error = refusal(json.dumps(message))
    assert (error.reason, error.repairable) == ("duplicate_create_path", False)


def test_create_paths_differing_only_in_case_are_distinct() -> None:
    message = patch_with(
        changes=[
            {"operation": "create_file", "path": "README.md", "content": "1"},
            {"operation": "create_file", "path": "readme.md", "content": "2"},
        ]
    )
    assert isinstance(parse_response(json.dumps(message)).response, PatchProposal)


def test_a_response_over_two_million_characters_is_refused_without_repair() -> None:
    raw = json.dumps(patch_with(summary="x" * MAX_RAW_CHARS))
    error = refusal(raw)
    assert (error.reason, error.repairable) == ("too_large", False)
    assert error.diagnostics.raw_chars == len(raw)
    assert error.diagnostics.raw_sha256 == hashlib.sha256(raw.encode()).hexdigest()


def test_more_than_two_hundred_changes_or_requests_is_a_schema_error() -> None:
    deletes = [{"editHandle": f"E{i}", "operation": "delete_file"} for i in range(1, 202)]
    assert refusal(json.dumps(patch_with(changes=deletes))).reason == "schema"
    assert parse_response(json.dumps(patch_with(changes=deletes[:MAX_ITEMS])))
    asks = [{"reason": "r", "symbol": f"s{i}"} for i in range(MAX_ITEMS + 1)]
    error = refusal(json.dumps({"kind": "context_request", "requests": asks}))
    assert (error.reason, error.repairable) == ("schema", True)


def test_diagnostics_hash_the_raw_text_as_received() -> None:
    raw = "\n```json\n" + json.dumps(REQUEST, ensure_ascii=False) + "\n```\n  é"
    error = refusal(raw)
    assert error.diagnostics.raw_sha256 == hashlib.sha256(raw.encode("utf-8")).hexdigest()
    assert error.diagnostics.raw_chars == len(raw)
    accepted = "  " + json.dumps({**REQUEST, "requests": [{"reason": "ü", "symbol": "ß"}]})
    diagnostics = parse_response(accepted).diagnostics
    assert diagnostics.raw_sha256 == hashlib.sha256(accepted.encode()).hexdigest()


def test_diagnostics_wire_form_is_camel_case() -> None:
    error = refusal('{"kind": "patch", "patch": {}, "x": 1}')
    assert error.diagnostics.to_wire() == {
        "rawSha256": error.diagnostics.raw_sha256,
        "rawChars": 38,
        "detectedShape": "patch",
        "normalization": "none",
        "validationError": error.message,
        "reason": "schema",
    }


def test_the_violation_is_a_protocol_error_with_the_shared_code() -> None:
    error = refusal("nope")
    assert not error.diagnostics.accepted
    assert isinstance(error, ProtocolError)
    assert isinstance(error, LatticeError)
    assert error.code == ProtocolError.code == "lattice.protocol_invalid"
    assert error.hint


def test_every_reason_has_a_fixed_repairability() -> None:
    assert dict(PROTOCOL_REASONS) == {
        "too_large": False,
        "malformed_json": True,
        "duplicate_key": True,
        "schema": True,
        "unknown_kind": True,
        "unknown_operation": True,
        "both_branches": True,
        "schema_version": False,
        "duplicate_handle": False,
        "duplicate_create_path": False,
        "provider_transaction_field": False,
    }


@pytest.mark.parametrize(
    "message",
    [
        patch_with(summary="\ud800"),
        patch_with(changes=[{"operation": "create_file", "path": "a.py", "content": "\udfff"}]),
    ],
)
def test_a_lone_surrogate_in_any_string_is_a_schema_error(message: object) -> None:
    error = refusal(json.dumps(message))
    assert (error.reason, error.repairable) == ("schema", True)
    assert "lone surrogate" in error.message


def test_a_transaction_field_in_a_change_is_refused_as_provider_transaction_field() -> None:
    change = {
        "editHandle": "E1",
        "operation": "delete_file",
        "expectedFingerprint": "0" * 40,
    }
    raw = json.dumps(
        {
            "kind": "patch",
            "patch": {"summary": "s", "changes": [change], "verificationCommands": []},
        }
    )
    with pytest.raises(ProtocolViolation) as caught:
        parse_response(raw)
    assert caught.value.reason == "provider_transaction_field"
    assert caught.value.repairable is False
