"""The wire form: typed messages round-trip, and one extra key anywhere fails closed."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lattice_runtime.protocol import (
    ContextRequest,
    ContextRequestItem,
    CreateFile,
    DeleteFile,
    PatchProposal,
    ProtocolViolation,
    ReplaceFile,
    Replacement,
    ReplaceText,
    encode_response,
    parse_response,
    response_to_wire,
)

_text = st.text(max_size=12)
_name = st.text(min_size=1, max_size=12).filter(lambda s: s.strip() != "")
_requests = st.lists(
    st.one_of(
        st.builds(ContextRequestItem, _name, path_hint=_name),
        st.builds(ContextRequestItem, _name, symbol=_name),
        st.builds(ContextRequestItem, _name, path_hint=_name, symbol=_name),
    ),
    min_size=1,
    max_size=4,
).map(lambda items: ContextRequest(tuple(items)))


@st.composite
def _proposals(draw: st.DrawFn) -> PatchProposal:
    kinds = draw(st.lists(st.sampled_from(["text", "file", "delete", "create"]), min_size=1))
    changes = []
    for number, kind in enumerate(kinds, start=1):
        if kind == "text":
            pairs = draw(st.lists(st.tuples(st.text(min_size=1), _text), min_size=1, max_size=3))
            changes.append(ReplaceText(f"E{number}", tuple(Replacement(*p) for p in pairs)))
        elif kind == "file":
            changes.append(ReplaceFile(f"E{number}", draw(_text)))
        elif kind == "delete":
            changes.append(DeleteFile(f"E{number}"))
        else:
            changes.append(CreateFile(f"new/{number}_{draw(_name)}.py", draw(_text)))
    commands = tuple(draw(st.lists(_name, max_size=3)))
    return PatchProposal(draw(_text), tuple(changes), commands)


_responses = st.one_of(_requests, _proposals())


def test_the_encoded_text_is_one_compact_json_object() -> None:
    request = ContextRequest((ContextRequestItem("why", symbol="Token"),))
    assert encode_response(request) == (
        '{"kind":"context_request","requests":[{"reason":"why","symbol":"Token"}]}'
    )


@settings(max_examples=150, deadline=None)
@given(response=_responses)
def test_a_typed_message_round_trips_through_its_wire_form(
    response: ContextRequest | PatchProposal,
) -> None:
    assert parse_response(encode_response(response)).response == response


def _objects(value: object, path: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    """Paths of every JSON object inside ``value``."""
    found: list[tuple[object, ...]] = []
    if isinstance(value, dict):
        found.append(path)
        for key, item in value.items():
            found += _objects(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _objects(item, (*path, index))
    return found


_OPTIONAL_KEYS = {"schemaVersion", "protocolVersion", "pathHint", "symbol"}
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=4), inner, max_size=2)
    ),
    max_leaves=4,
)


@settings(max_examples=200, deadline=None)
@given(response=_responses, data=st.data())
def test_one_extra_key_in_any_object_at_any_level_fails_closed(
    response: ContextRequest | PatchProposal, data: st.DataObject
) -> None:
    wire: object = response_to_wire(response)
    path = data.draw(st.sampled_from(_objects(wire)))
    target = wire
    for step in path:
        target = target[step]  # type: ignore[index]  # a path found by _objects
    assert isinstance(target, dict)
    key = data.draw(
        st.text(max_size=20).filter(lambda k: k not in target and k not in _OPTIONAL_KEYS)
    )
    target[key] = data.draw(_json)
    with pytest.raises(ProtocolViolation) as caught:
        parse_response(json.dumps(wire))
    error = caught.value
    assert error.reason in {"schema", "both_branches"}
    assert error.repairable
