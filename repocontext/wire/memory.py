"""The wire form of memory answers: forget, list_topics, neighbors (entries: ``wire.entries``)."""

from __future__ import annotations

from pydantic import Field

from repocontext import memory
from repocontext.wire._base import WireModel

__all__ = ["ForgetResult", "NeighborNode", "NeighborsResult", "TopicCount", "TopicsResult"]


class ForgetResult(WireModel):
    """Result of ``repocontext_forget``."""

    key: str
    forgotten: bool
    lapses_at: float | None = None

    @classmethod
    def of(cls, result: memory.Forgotten) -> ForgetResult:
        """Build the wire form of a :class:`~repocontext.memory.Forgotten`."""
        return cls(key=result.key, forgotten=result.forgotten, lapses_at=result.lapses_at)


class TopicCount(WireModel):
    """One topic and its number of live entries."""

    topic: str
    count: int

    @classmethod
    def of(cls, topic: memory.TopicCount) -> TopicCount:
        """Build the wire form of a :class:`~repocontext.memory.TopicCount`."""
        return cls(topic=topic.topic, count=topic.count)


class TopicsResult(WireModel):
    """Result of ``repocontext_list_topics``."""

    topics: list[TopicCount]

    @classmethod
    def of(cls, topics: list[memory.TopicCount]) -> TopicsResult:
        """Build the wire form of the topics of a repository."""
        return cls(topics=[TopicCount.of(topic) for topic in topics])


class NeighborNode(WireModel):
    """One key reached by ``repocontext_neighbors``."""

    key: str
    exists: bool
    depth: int
    via: str
    from_: str = Field(alias="from")
    stale: bool = False

    @classmethod
    def of(cls, node: memory.NeighborNode) -> NeighborNode:
        """Build the wire form of a :class:`~repocontext.memory.NeighborNode`."""
        return cls.model_validate(
            {
                "key": node.key,
                "exists": node.exists,
                "depth": node.depth,
                "via": node.via,
                "from": node.from_key,  # a Python keyword: set by its wire name
                "stale": node.stale,
            }
        )


class NeighborsResult(WireModel):
    """Result of ``repocontext_neighbors``."""

    key: str
    nodes: list[NeighborNode]
    truncated: bool

    @classmethod
    def of(cls, walk: memory.Neighbors) -> NeighborsResult:
        """Build the wire form of a :class:`~repocontext.memory.Neighbors` walk."""
        nodes = [NeighborNode.of(node) for node in walk.nodes]
        return cls(key=walk.key, nodes=nodes, truncated=walk.truncated)
