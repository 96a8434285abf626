"""The camelCase wire form of typed values: pydantic result models used by MCP, HTTP and CLI --json."""
