"""A memory's neighbourhood as a small drawing: the memory in the middle, what it links to and
what links to it around it, one line each, labelled with the link's type. Geometry only: the
memory page's template draws it as SVG, with no JavaScript."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from memories.models import Memory
from memories.selectors.relations import LinkView

WIDTH, HEIGHT = 640, 360
RADIUS = 135
#: Most neighbours drawn; the page's table lists every link.
MAX_NODES = 12
LABEL_CHARS = 28


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"


def neighbourhood(memory: Memory, links: Sequence[LinkView]) -> dict[str, Any]:
    """Nodes on a circle around the memory (entities and memories), with the lines to them."""
    centre = {
        "x": WIDTH / 2,
        "y": HEIGHT / 2,
        "label_y": HEIGHT / 2 + 26,
        "label": _short(memory.text),
    }
    ends: dict[tuple[str, str], dict[str, Any]] = {}
    for link in links:
        if link.other_memory is not None:
            key = ("memory", link.other_memory.mem_id)
            label, kind = _short(link.other_memory.text), "memory"
        else:
            key = ("entity", link.other_entity.entity_id)
            label, kind = _short(link.other_entity.name), "entity"
        end = ends.setdefault(key, {"id": key[1], "kind": kind, "label": label, "types": []})
        arrow = "→" if link.direction == "out" else "←"
        end["types"].append(f"{arrow} {link.kind}")
    shown = list(ends.values())[:MAX_NODES]
    for i, node in enumerate(shown):
        angle = 2 * math.pi * i / max(len(shown), 1) - math.pi / 2
        node["x"] = round(centre["x"] + RADIUS * 1.6 * math.cos(angle), 1)
        node["y"] = round(centre["y"] + RADIUS * math.sin(angle), 1)
        # The type sits two thirds of the way out, clear of the memory's own label.
        node["mid_x"] = round(centre["x"] + (node["x"] - centre["x"]) * 0.62, 1)
        node["mid_y"] = round(centre["y"] + (node["y"] - centre["y"]) * 0.62 - 4, 1)
        node["type_label"] = ", ".join(dict.fromkeys(node["types"]))
        node["box_x"], node["box_y"] = node["x"] - 7, node["y"] - 7
        node["label_y"] = node["y"] + 20
    return {
        "width": WIDTH,
        "height": HEIGHT,
        "centre": centre,
        "nodes": shown,
        "hidden": max(len(ends) - MAX_NODES, 0),
    }
