"""Package names read from the manifests a repository's packages publish under."""

import pytest

from repocontext.index.parsing.manifests import manifest_name


@pytest.mark.parametrize(
    ("path", "text", "name"),
    [
        ("web/package.json", '{"name": "@acme/ui", "main": "dist/index.js"}', "@acme/ui"),
        ("package.json", '{"private": true}', None),
        ("package.json", "{not json", None),
        ("package.json", '["a list"]', None),
        ("crates/mini/Cargo.toml", '[package]\nname = "mini-redis"\n', "mini_redis"),
        ("Cargo.toml", '[package]\nname = "tokio-util"\n[lib]\nname = "tu"\n', "tu"),
        ("Cargo.toml", '[workspace]\nmembers = ["a"]\n', None),
        ("Cargo.toml", "[package\n", None),
        ("README.md", "name", None),
        ("package.json", '\ufeff{"name": "bom"}', "bom"),
        ("node_modules/react/package.json", '{"name": "react"}', None),  # an installed copy
        ("package.json", '{"a":' * 5000, None),  # nested too deep to parse
        ("Cargo.toml", "a = " + "[" * 5000, None),
        ("Cargo.toml", "[package]\nname = 5\n", None),
        ("Cargo.toml", "[package]\nname = { workspace = true }\n", None),
        ("package.json", '{"name": ["a"]}', None),
    ],
)
def test_manifests_name_their_package(path, text, name) -> None:
    assert manifest_name(path, text) == name
