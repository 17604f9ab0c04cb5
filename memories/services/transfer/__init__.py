"""Import: a file written by ``meaning-memory export`` (``selectors.export``), into a workspace
of this install or another. One module a job: ``reading`` (the file's lines, bounded),
``checking`` (the whole file checked, reading only), ``writing`` (scopes, agents, entities,
memories) and ``connections`` (links, threads, divergences).

What it guarantees (docs/operations.md, "Export and import", says it to users):

- **Checked whole first, then written.** Every line is read (at most
  ``exchange.LINE_MAX_BYTES``), every record checked against its fields' rules (those of
  remember, bulk and the REST API, from ``memories.rules``), no record twice, and every
  reference resolved (to a record of the file or, for memories, scopes and agents, to the
  target workspace's) before anything is written: a refused file writes nothing, not even the
  workspace, and each problem is named by its line, its field and the rule.
- **Idempotent.** A memory is known by its ``origin`` (the ``mem_id`` it was first given): one
  already in the workspace (as its own ``mem_id``, or brought by an earlier import) is left as
  it is, and so is one whose writer's idempotency key its scope already holds. Entities are
  known by name, links by their ends, type and time, threads by their members,
  divergences by their pair. Importing a file twice stores nothing new.
- **Resumable.** Memories are written in batches, each with its history in one transaction; an
  import stopped halfway is run again and goes on where it stopped.
- **New ids.** Every imported memory, entity, link, thread and divergence gets a new public id;
  the ids the file names inside histories, evidence and thread cues are translated to them.
- What it never does: change a memory already there, import a token (agents the workspace
  lacks are made with a new token nobody holds: ``createagent --new-token`` gives one), or
  recompute scores (a memory keeps the scores, origins and attribution it had). Vectors are
  used as they are when the file has them and was made with the same embedding model;
  otherwise the texts are embedded again here.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memories.services.bulk import announce_import
from memories.services.tenancy import workspace_get_or_create
from memories.services.transfer import connections
from memories.services.transfer.checking import check_file
from memories.services.transfer.reading import read_records
from memories.services.transfer.writing import Importer, ImportResult, Progress

__all__ = ["ImportResult", "check_file", "import_file"]

#: Memories embedded and written per transaction.
BATCH = 256
#: Links written per transaction.
LINK_BATCH = 2000


def _records(path: Path) -> Iterator[dict[str, Any]]:
    """The records of a file ``check_file`` found right."""
    for _, record, _ in read_records(path):
        if record is not None:
            yield record


def import_file(
    path: Path, *, workspace_slug: str | None = None, progress: Progress | None = None
) -> ImportResult:
    """Import an export file into ``workspace_slug`` (default: the workspace it was exported
    from; made if new). ValidationFailed, with nothing written, for a file that is not right."""
    plan = check_file(path, workspace_slug=workspace_slug)
    workspace = plan.here.workspace or workspace_get_or_create(slug=plan.workspace_slug)
    importer = Importer(plan, workspace, progress)
    by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in _records(path):  # the small ones first: everything names them
        if record["type"] in ("scope", "agent", "entity"):
            by_type[record["type"]].append(record)
    importer.people(by_type["scope"], by_type["agent"])
    importer.entities(by_type["entity"])
    total, done, batch, replacements = plan.counts.get("memory", 0), 0, [], []
    later: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in _records(path):
        kind = record["type"]
        if kind == "memory":
            batch.append(record)
            if record["superseded_by"]:
                replacements.append((record["origin"], record["superseded_by"]))
            if len(batch) == BATCH:
                importer.memories(batch)
                done += len(batch)
                importer.progress("memories", done, total)
                batch = []
        elif kind in ("link", "thread", "divergence"):
            later[kind].append(record)
    importer.memories(batch)
    importer.progress("memories", total, total)
    importer.replacements(replacements)
    links = later["link"]
    for first in range(0, len(links), LINK_BATCH):
        connections.links(importer, links[first : first + LINK_BATCH])
        importer.progress("links", min(first + LINK_BATCH, len(links)), len(links))
    connections.threads(importer, later["thread"])
    connections.divergences(importer, later["divergence"])
    announce_import(workspace.id, importer.result.stored.get("memory", 0))
    return importer.result
