"""A stored symbol record reads back as its typed definitions (the codec memory links use)."""

import pytest

from repocontext.index.model import Symbol
from repocontext.index.projections.xref_records import (
    SymbolDefinition,
    read_symbol_definitions,
    symbol_record,
)
from repocontext.store import SYMBOL, Store
from repocontext.store.keys import symbol_key


@pytest.fixture
def store(tmp_path):
    with Store.open(tmp_path / "data") as opened:
        yield opened


def test_a_symbol_record_reads_back_as_its_definitions_in_path_order(store):
    found = [
        ("a.py", Symbol("function", "area", "a.area", "def area():", 3, 9)),
        ("b.py", Symbol("function", "area", "a.area", "def area(x):", 12, 14)),
    ]
    store.put(SYMBOL, symbol_key("demo", "a.area"), symbol_record("a.area", found))

    assert read_symbol_definitions(store, symbol_key("demo", "a.area")) == (
        SymbolDefinition("a.py", 3, 9),
        SymbolDefinition("b.py", 12, 14),
    )


def test_a_missing_symbol_record_reads_as_none(store):
    assert read_symbol_definitions(store, symbol_key("demo", "nowhere")) is None
