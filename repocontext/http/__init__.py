"""The HTTP surface: health probes and the MCP mount."""

from repocontext.http.app import ACCESS_LOGGER, LOCAL_HOSTS, create_app

__all__ = ["ACCESS_LOGGER", "LOCAL_HOSTS", "create_app"]
