"""What a writer gives with a memory: the entities it names (``memories.commands.EntityRef``,
checked by the input shape) and its links, resolved to memories the writer can see."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memories.commands import EntityRef, LinkTo
from memories.errors import Errors
from memories.models import Agent, Memory
from memories.selectors.reader import Reader

__all__ = ["EntityRef", "LinkRef", "resolve_links"]


@dataclass(frozen=True)
class LinkRef:
    target: Memory
    kind: str
    weight: float


def resolve_links(agent: Agent, links: Sequence[LinkTo], errors: Errors) -> list[LinkRef]:
    """The memories the writer links to, each one the agent can see; one it cannot see is
    named exactly as one that does not exist."""
    if not links:
        return []
    visible = {
        m.mem_id: m
        for m in Reader.of_agent(agent).sees(
            Memory.objects.filter(mem_id__in={link.to for link in links})
        )
    }
    found = []
    for i, link in enumerate(links):
        if link.to not in visible:
            errors.missing(f"links[{i}].to", f"no memory {link.to!r} is visible to this agent.")
        else:
            found.append(LinkRef(visible[link.to], link.kind, link.weight))
    return found
