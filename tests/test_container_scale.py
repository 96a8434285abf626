"""The scaled-out deployment without Docker: docker/compose.scale.yaml and its proxy config.

The compose file is parsed: PostgreSQL with a health check, two replicas of the same image as
docker/compose.yaml over one store URL (each with the image's own /data), and a proxy that is
the one published port. Each replica's environment is read by the real Settings, and the store
URL it names is one the store accepts.
"""

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from repocontext.settings import Settings
from repocontext.store.urls import redact_url

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = ROOT / "docker" / "compose.scale.yaml"
SINGLE = ROOT / "docker" / "compose.yaml"
NGINX = ROOT / "docker" / "nginx.scale.conf"


def _interpolate(value: str) -> str:
    """Compose's ``${NAME...}`` with a password set and every other variable at its default."""
    given = {"REPOCONTEXT_PG_PASSWORD": "s3cret"}

    def one(match: re.Match[str]) -> str:
        name, _, rest = match.group(1).partition(":")
        return given.get(name, rest[1:] if rest.startswith("-") else "")

    return re.sub(r"\$\{([^}]*)\}", one, value)


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    loaded = yaml.safe_load(COMPOSE.read_text())
    assert isinstance(loaded, dict)
    return loaded


def test_postgresql_is_the_store_with_a_health_check_and_a_volume_of_its_own(
    compose: dict[str, Any],
) -> None:
    postgres = compose["services"]["postgres"]
    assert postgres["image"].startswith("postgres:")
    assert postgres["healthcheck"]["test"][:2] == ["CMD", "pg_isready"]
    [volume] = postgres["volumes"]
    assert volume["type"] == "volume" and volume["source"] in compose["volumes"]
    assert "${REPOCONTEXT_PG_PASSWORD:?" in COMPOSE.read_text()  # no default password


def test_two_replicas_of_the_single_service_image_share_one_postgresql_store(
    compose: dict[str, Any],
) -> None:
    replica = compose["services"]["repocontext"]
    single = next(iter(yaml.safe_load(SINGLE.read_text())["services"].values()))
    assert replica["build"] == single["build"] and replica["image"] == single["image"]
    assert replica["deploy"]["replicas"] >= 2
    assert replica["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert "ports" not in replica  # only the proxy is published
    env = {name: _interpolate(str(value)) for name, value in replica["environment"].items()}
    settings = Settings(**{name.removeprefix("REPOCONTEXT_").lower(): v for name, v in env.items()})
    assert settings.store_url is not None
    assert redact_url(settings.store_url) == "postgresql://repocontext@postgres:5432/repocontext"
    assert settings.workers == 1
    # /data holds only derived indexes: no shared named volume (the image's own per container)
    targets = {mount["target"] for mount in replica["volumes"]}
    assert "/data" not in targets and {"/workspace", "/archive"} <= targets


def test_the_proxy_is_the_one_published_port_and_routes_to_every_replica(
    compose: dict[str, Any],
) -> None:
    proxy = compose["services"]["proxy"]
    assert proxy["ports"] == ["127.0.0.1:8080:8080"]
    assert proxy["depends_on"]["repocontext"]["condition"] == "service_healthy"
    assert "/health/ready" in " ".join(proxy["healthcheck"]["test"])
    [config] = proxy["volumes"]
    assert (COMPOSE.parent / config["source"]).resolve() == NGINX
    text = NGINX.read_text()
    assert "listen 8080;" in text
    assert re.search(r"set \$replicas repocontext:8080;", text)
    assert "proxy_pass http://$replicas;" in text  # re-resolved: every replica, also restarted
    assert "proxy_buffering off;" in text  # streamed MCP answers pass as they are written
