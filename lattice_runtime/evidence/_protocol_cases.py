"""Group ``protocol``: the worker protocol fails closed (``docs/lattice-protocol.md``).

12 valid context requests and 12 valid exact patches must be accepted by the real
:func:`parse_response` and equal, field for field, the message the raw text means; 12
ambiguous envelopes (both branches, two objects, extra keys, an unknown kind, wrong versions,
prose around the JSON, duplicate keys or handles, a transaction field) and 12 malformed JSON
strings must be refused with a :class:`ProtocolViolation` carrying the stable reason the
protocol names for them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Final

from lattice_runtime.evidence.case import SafetyCase, outcome_case
from lattice_runtime.protocol import (
    Change,
    ContextRequest,
    ContextRequestItem,
    CreateFile,
    DeleteFile,
    PatchProposal,
    ProtocolViolation,
    ReplaceFile,
    Replacement,
    ReplaceText,
    WorkerResponse,
    parse_response,
)

_GROUP: Final = "protocol"
_ACCEPTED: Final = "accepted: equal to the intended message"

Wire = Mapping[str, object]
"""One JSON object as written by a worker (the suite's raw inputs)."""


def _context_text(*requests: Wire, **extra: object) -> str:
    return json.dumps({"kind": "context_request", "requests": list(requests), **extra})


def _patch_text(*changes: Wire, commands: tuple[str, ...] = (), **extra: object) -> str:
    patch = {"summary": "s", "changes": list(changes), "verificationCommands": list(commands)}
    return json.dumps({"kind": "patch", "patch": patch, **extra})


def _asked(reason: str, path: str | None = None, symbol: str | None = None) -> ContextRequest:
    return ContextRequest((ContextRequestItem(reason, path, symbol),))


def _patch(*changes: Change, commands: tuple[str, ...] = ()) -> PatchProposal:
    return PatchProposal("s", changes, commands)


def _replace(handle: str, *pairs: tuple[str, str]) -> ReplaceText:
    return ReplaceText(handle, tuple(Replacement(old, new) for old, new in pairs))


def _text_change(handle: str, *pairs: tuple[str, str]) -> Wire:
    replacements = [{"oldContent": old, "newContent": new} for old, new in pairs]
    return {"editHandle": handle, "operation": "replace_text", "replacements": replacements}


_ASK: Final[Wire] = {"reason": "need the caller", "pathHint": "src/app/auth.py"}
_ASKED: Final = _asked("need the caller", "src/app/auth.py")
_CONTEXT: Final = _context_text(_ASK)
_DELETE: Final[Wire] = {"editHandle": "E1", "operation": "delete_file"}
_DELETED: Final = _patch(DeleteFile("E1"))
_ONE: Final = _text_change("E1", ("return token", "return None"))
_ONE_TYPED: Final = _replace("E1", ("return token", "return None"))
_WHOLE: Final[Wire] = {"editHandle": "E3", "operation": "replace_file", "replacementContent": "x\n"}
_CREATE: Final[Wire] = {"operation": "create_file", "path": "src/new module.py", "content": "y\n"}
_MANY: Final = tuple({"reason": f"page {n}", "symbol": f"f{n}"} for n in range(200))
_THREE: Final = (("a0", "b0"), ("a1", "b1"), ("a2", "b2"))

CONTEXT_REQUESTS: Final[tuple[tuple[str, str, WorkerResponse], ...]] = (
    ("a path hint", _CONTEXT, _ASKED),
    (
        "a symbol only",
        _context_text({"reason": "r", "symbol": "reset"}),
        _asked("r", None, "reset"),
    ),
    (
        "a path hint and a symbol",
        _context_text({"reason": "r", "pathHint": "a.py", "symbol": "f"}),
        _asked("r", "a.py", "f"),
    ),
    (
        "two requests in order",
        _context_text({"reason": "a", "symbol": "f"}, {"reason": "b", "pathHint": "b.py"}),
        ContextRequest((ContextRequestItem("a", None, "f"), ContextRequestItem("b", "b.py"))),
    ),
    ("the protocol version echoed", _context_text(_ASK, protocolVersion=5), _ASKED),
    ("the seed's schema version", _context_text(_ASK, schemaVersion=1), _ASKED),
    ("one json code fence", f"```json\n{_CONTEXT}\n```", _ASKED),
    ("a bare fence and surrounding whitespace", f"\n  ```\n{_CONTEXT}\n```  \n", _ASKED),
    (
        "non-ASCII text",
        _context_text({"reason": "Aufrufer \u2013 \u00fc", "symbol": "gr\u00f6\u00dfe"}),
        _asked("Aufrufer \u2013 \u00fc", None, "gr\u00f6\u00dfe"),
    ),
    (
        "a path hint with spaces",
        _context_text({"reason": "r", "pathHint": "src/my pkg/a b.py"}),
        _asked("r", "src/my pkg/a b.py"),
    ),
    (
        "keys in another order",
        '{"requests":[{"symbol":"g","reason":"r"}],"kind":"context_request"}',
        _asked("r", None, "g"),
    ),
    (
        "200 requests, the most allowed",
        _context_text(*_MANY),
        ContextRequest(tuple(ContextRequestItem(f"page {n}", None, f"f{n}") for n in range(200))),
    ),
)
"""Valid context requests: (what, raw text, the message it means)."""

EXACT_PATCHES: Final[tuple[tuple[str, str, WorkerResponse], ...]] = (
    ("one replacement", _patch_text(_ONE), _patch(_ONE_TYPED)),
    (
        "three replacements",
        _patch_text(_text_change("E2", *_THREE)),
        _patch(_replace("E2", *_THREE)),
    ),
    ("a whole-file replacement", _patch_text(_WHOLE), _patch(ReplaceFile("E3", "x\n"))),
    ("a deletion", _patch_text(_DELETE), _DELETED),
    ("a new file", _patch_text(_CREATE), _patch(CreateFile("src/new module.py", "y\n"))),
    (
        "all four operations",
        _patch_text(_ONE, _WHOLE, {"editHandle": "E9", "operation": "delete_file"}, _CREATE),
        _patch(
            _ONE_TYPED,
            ReplaceFile("E3", "x\n"),
            DeleteFile("E9"),
            CreateFile("src/new module.py", "y\n"),
        ),
    ),
    (
        "suggested verification commands",
        _patch_text(_DELETE, commands=("pytest -q", "ruff check")),
        _patch(DeleteFile("E1"), commands=("pytest -q", "ruff check")),
    ),
    (
        "the seed's schema version on the patch",
        '{"kind":"patch","patch":{"schemaVersion":1,"summary":"s","changes":'
        '[{"editHandle":"E1","operation":"delete_file"}],"verificationCommands":[]}}',
        _DELETED,
    ),
    ("the protocol version echoed", _patch_text(_DELETE, protocolVersion=5), _DELETED),
    ("one JSON code fence", f"```JSON\n{_patch_text(_DELETE)}\n```", _DELETED),
    (
        "backticks inside strings",
        _patch_text(_text_change("E4", ("```", "```json\n{}\n```"))),
        _patch(_replace("E4", ("```", "```json\n{}\n```"))),
    ),
    (
        "a two-digit handle, CRLF and non-ASCII text",
        _patch_text(_text_change("E12", ("a\r\nb", "\u00e4\r\nb\t"))),
        _patch(_replace("E12", ("a\r\nb", "\u00e4\r\nb\t"))),
    ),
)
"""Valid patches: (what, raw text, the proposal it means)."""

AMBIGUOUS: Final[tuple[tuple[str, str, str], ...]] = (
    ("a patch kind with both branches", _patch_text(_DELETE, requests=[_ASK]), "both_branches"),
    (
        "a context kind with both branches",
        _context_text(_ASK, patch=json.loads(_patch_text(_DELETE))["patch"]),
        "both_branches",
    ),
    ("two JSON objects", _CONTEXT + "\n" + _patch_text(_DELETE), "malformed_json"),
    ("an extra top-level key", _context_text(_ASK, note="x"), "schema"),
    ("an extra key in a change", _patch_text({**_DELETE, "note": "x"}), "schema"),
    ("an unknown kind", _CONTEXT.replace("context_request", "edit"), "unknown_kind"),
    ("schema version 2", _patch_text(_DELETE, schemaVersion=2), "schema_version"),
    ("protocol version 4", _patch_text(_DELETE, protocolVersion=4), "schema_version"),
    ("prose around the JSON", f"Here is my answer: {_CONTEXT} Hope it helps.", "malformed_json"),
    ("a repeated key", '{"kind":"patch","kind":"context_request","requests":[]}', "duplicate_key"),
    ("one handle used twice", _patch_text(_DELETE, _DELETE), "duplicate_handle"),
    (
        "a transaction field",
        _patch_text({**_DELETE, "expectedFingerprint": "0" * 40}),
        "provider_transaction_field",
    ),
)
"""Ambiguous envelopes: (what, raw text, the reason they are refused with)."""

MALFORMED: Final[tuple[tuple[str, str], ...]] = (
    ("an empty response", ""),
    ("an open brace", "{"),
    ("a trailing comma", '{"kind": "context_request",}'),
    ("single quotes", "{'kind': 'patch'}"),
    ("unquoted keys", '{kind: "patch"}'),
    ("NaN", _CONTEXT[:-3] + ', "x": NaN}]}'),
    ("Infinity", '{"kind": "patch", "patch": Infinity}'),
    ("a comment line", "// answer\n" + _CONTEXT),
    ("an unclosed fence", "```json\n" + _CONTEXT),
    ("nesting 100,000 deep", "[" * 100_000 + "]" * 100_000),
    ("a 5,000-digit number", '{"kind": ' + "9" * 5000 + "}"),
    ("a truncated object", _CONTEXT[:-3]),
)
"""Malformed JSON: (what, raw text); each is refused with ``malformed_json``."""


def protocol_cases() -> tuple[SafetyCase, ...]:
    """The group's 48 cases: valid requests, valid patches, ambiguous, malformed.

    Returns:
        The cases, 12 of each kind in that order.
    """
    cases: list[SafetyCase] = []
    for kind, table in (("context", CONTEXT_REQUESTS), ("patch", EXACT_PATCHES)):
        for number, (what, raw, meant) in enumerate(table, 1):
            cases.append(_case(f"{kind}.{number:02d}", f"valid {kind}: {what}", raw, meant))
    for number, (what, raw, reason) in enumerate(AMBIGUOUS, 1):
        cases.append(_case(f"ambiguous.{number:02d}", f"ambiguous: {what}", raw, reason))
    for number, (what, raw) in enumerate(MALFORMED, 1):
        cases.append(_case(f"malformed.{number:02d}", f"malformed: {what}", raw, "malformed_json"))
    return tuple(cases)


def _case(suffix: str, what: str, raw: str, meant: WorkerResponse | str) -> SafetyCase:
    if isinstance(meant, str):
        expected = f"refused: {meant}"
        description = f"{what} is refused with {meant}"
    else:
        expected = _ACCEPTED
        description = f"{what} is accepted as exactly the intended message"
    return outcome_case(_GROUP, f"{_GROUP}.{suffix}", description, expected, _observe(raw, meant))


def _observe(raw: str, meant: WorkerResponse | str) -> str:
    try:
        parsed = parse_response(raw)
    except ProtocolViolation as error:
        return f"refused: {error.reason}"
    if parsed.response == meant:
        return _ACCEPTED
    return f"accepted: differs from the intended message ({type(parsed.response).__name__})"
