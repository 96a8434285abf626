"""The HTTP surface: health probes and the MCP mount."""

from repocontext.http.app import LOCAL_HOSTS, create_app

__all__ = ["LOCAL_HOSTS", "create_app"]
