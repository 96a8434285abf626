from repocontext.http import LOCAL_HOSTS
from repocontext.server import allowed_hosts, connect_banner


def test_connect_banner_names_the_url_the_claude_command_and_a_json_config() -> None:
    banner = connect_banner("127.0.0.1", 8765)
    assert "http://127.0.0.1:8765/mcp" in banner
    assert "claude mcp add --transport http repocontext http://127.0.0.1:8765/mcp" in banner
    assert '{"mcpServers": {"repocontext": {"type": "http", "url": ' in banner


def test_connect_banner_points_wildcard_binds_at_loopback() -> None:
    assert "http://127.0.0.1:9000/mcp" in connect_banner("0.0.0.0", 9000)
    assert "http://[fd00::1]:9000/mcp" in connect_banner("fd00::1", 9000)


def test_allowed_hosts_add_a_non_loopback_bind_address() -> None:
    assert allowed_hosts("127.0.0.1") == LOCAL_HOSTS
    assert allowed_hosts("10.0.0.5") == (*LOCAL_HOSTS, "10.0.0.5:*")


def test_allowed_hosts_add_configured_patterns_once() -> None:
    hosts = allowed_hosts("0.0.0.0", ("repocontext:*", "127.0.0.1:*"))
    assert hosts == (*LOCAL_HOSTS, "repocontext:*")


def test_connect_banner_shows_the_bearer_header_when_auth_is_on() -> None:
    banner = connect_banner("127.0.0.1", 8765, authenticated=True)
    assert '"Authorization": "Bearer ${REPOCONTEXT_TOKEN}"' in banner
    assert '--header "Authorization: Bearer $REPOCONTEXT_TOKEN"' in banner
