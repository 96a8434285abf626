"""The base of every wire model: camelCase on the wire, immutable."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

__all__ = ["WireModel"]


class WireModel(BaseModel):
    """Base of every tool result: camelCase on the wire, immutable."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True)
