"""The package faces: what each package exports in ``__all__`` is real, documented and typed.

A library user (the Lattice runtime among them) imports only these faces; the architecture
tests keep the adapters to them too.
"""

import dataclasses
import importlib
import inspect

import pytest

FACES = (
    "repocontext",
    "repocontext.arguments",
    "repocontext.auth",
    "repocontext.claims",
    "repocontext.entries",
    "repocontext.errors",
    "repocontext.index",
    "repocontext.memory",
    "repocontext.pack",
    "repocontext.search",
    "repocontext.settings",
    "repocontext.store",
    "repocontext.tokens",
    "repocontext.wire",
    "repocontext.workspace",
)

# The values that flow between layers (issue 22), and the face each is imported from.
TYPED_VALUES = {
    "repocontext.index": (
        "FileNode",
        "Symbol",
        "OutlineView",
        "RelatedView",
        "RelatedLink",
        "DriftReport",
        "IndexStatus",
    ),
    "repocontext.search": (
        "SymbolMatch",
        "SearchHit",
        "SearchResult",
        "Freshness",
        "RepoMap",
        "RepoMapEntry",
        "SearchRequest",
    ),
    "repocontext.pack": ("Page", "Bundle", "BundleEntry", "BundleUnit", "ContextRequest"),
    "repocontext.memory": ("MemoryEntry", "Neighbors", "TopicCount", "Forgotten"),
    "repocontext.claims": ("ClaimResult", "ClaimStatus", "RenewResult", "ReleaseResult"),
    "repocontext.workspace": ("RepoInfo", "HealthReport"),
}


@pytest.mark.parametrize("face", FACES)
def test_every_exported_name_exists_is_public_and_documented(face: str) -> None:
    module = importlib.import_module(face)
    exported = list(getattr(module, "__all__", ()))
    assert exported, f"{face} exports nothing"
    assert len(set(exported)) == len(exported)
    for name in exported:
        assert not name.startswith("_") or name == "__version__", f"{face}.{name}"
        value = getattr(module, name)  # AttributeError: exported but missing
        if inspect.isclass(value) or inspect.isfunction(value):
            assert inspect.getdoc(value), f"{face}.{name} has no docstring"


@pytest.mark.parametrize("face", FACES)
def test_no_package_docstring_is_a_placeholder(face: str) -> None:
    doc = importlib.import_module(face).__doc__ or ""
    assert doc.strip()
    assert "arrives with its own issue" not in doc


@pytest.mark.parametrize(("face", "names"), sorted(TYPED_VALUES.items()))
def test_the_values_between_layers_are_frozen_slotted_dataclasses_of_the_faces(
    face: str, names: tuple[str, ...]
) -> None:
    module = importlib.import_module(face)
    for name in names:
        assert name in module.__all__, f"{face} does not export {name}"
        value = getattr(module, name)
        assert dataclasses.is_dataclass(value), f"{face}.{name}"
        assert value.__dataclass_params__.frozen, f"{face}.{name} is not frozen"
        assert "__slots__" in vars(value), f"{face}.{name} has no slots"
