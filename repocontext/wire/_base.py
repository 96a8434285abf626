"""The base of every wire model: camelCase aliases, immutable, and the JSON object it is sent as."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, JsonValue
from pydantic.alias_generators import to_camel

__all__ = ["WireModel"]


class WireModel(BaseModel):
    """Base of every tool result: camelCase on the wire, immutable."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True)

    def wire(self) -> dict[str, JsonValue]:
        """The camelCase JSON object (what MCP sends as structured content)."""
        return self.model_dump(mode="json", by_alias=True)
