"""The worker wire protocol (prompt protocol version 5): messages, parsing, prompts.

A worker answers each turn with exactly one JSON object, a context request or a patch;
:func:`parse_response` is the one reader of that JSON and fails closed with
:class:`ProtocolViolation` (code ``lattice.protocol_invalid``). :func:`render_prompt` writes the
turn's prompt. See ``docs/lattice-protocol.md``.
"""

from lattice_runtime.protocol._checks import MAX_ITEMS, TRANSACTION_FIELDS
from lattice_runtime.protocol.diagnostics import (
    PROTOCOL_REASONS,
    Diagnostics,
    ProtocolReason,
    ProtocolViolation,
    Shape,
    is_repairable,
)
from lattice_runtime.protocol.encode import encode_response, response_to_wire
from lattice_runtime.protocol.json_schema import response_schema
from lattice_runtime.protocol.messages import (
    PROTOCOL_VERSION,
    Change,
    ContextRequest,
    ContextRequestItem,
    CreateFile,
    DeleteFile,
    PatchProposal,
    ReplaceFile,
    Replacement,
    ReplaceText,
    WorkerResponse,
)
from lattice_runtime.protocol.normalize import MAX_RAW_CHARS
from lattice_runtime.protocol.parse import ParsedResponse, parse_response
from lattice_runtime.protocol.prompt import (
    PromptInput,
    PromptPage,
    TurnKind,
    protocol_repair_feedback,
    render_prompt,
)
from lattice_runtime.protocol.schema import SEED_SCHEMA_VERSION

__all__ = [
    "MAX_ITEMS",
    "MAX_RAW_CHARS",
    "PROTOCOL_REASONS",
    "PROTOCOL_VERSION",
    "SEED_SCHEMA_VERSION",
    "TRANSACTION_FIELDS",
    "Change",
    "ContextRequest",
    "ContextRequestItem",
    "CreateFile",
    "DeleteFile",
    "Diagnostics",
    "ParsedResponse",
    "PatchProposal",
    "PromptInput",
    "PromptPage",
    "ProtocolReason",
    "ProtocolViolation",
    "ReplaceFile",
    "ReplaceText",
    "Replacement",
    "Shape",
    "TurnKind",
    "WorkerResponse",
    "encode_response",
    "is_repairable",
    "parse_response",
    "protocol_repair_feedback",
    "render_prompt",
    "response_schema",
    "response_to_wire",
]
