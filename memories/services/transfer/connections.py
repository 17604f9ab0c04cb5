"""Writing what joins the memories an import brought: links, threads (with their members)
and divergences, each set in one transaction. An end erased here leaves its record out, and
the result says so; every other end was resolved by the check."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np
from django.db import transaction

from memories.exchange import parse_time
from memories.models import Divergence, Link, Memory, Thread, ThreadMember
from memories.services.transfer.writing import Importer, set_times


def links(importer: Importer, records: list[dict[str, Any]]) -> None:
    wanted = []
    for record in records:
        source = importer.memory_pk.get(record["source"])
        target_memory = importer.memory_pk.get(record["target_memory"])
        target_entity = importer.entity_pk.get(record["target_entity"])
        if source is None or (target_memory is None and target_entity is None):
            importer.result.skipped["link (an end erased here)"] += 1
            continue
        wanted.append((record, source, target_memory, target_entity))
    existing = defaultdict(list)
    rows = Link.objects.filter(source_id__in={w[1] for w in wanted}).values_list(
        "source_id",
        "target_memory_id",
        "target_entity_id",
        "kind",
        "created_at",
        "removed_at",
        "link_id",
    )
    for source, target_memory, target_entity, kind, created, removed, link_id in rows:
        existing[(source, target_memory, target_entity, kind)].append((created, removed, link_id))
    made = []
    for record, source, target_memory, target_entity in wanted:
        same = existing[(source, target_memory, target_entity, record["kind"])]
        created = parse_time(record["created_at"])
        match = next(
            (
                link_id
                for when, removed, link_id in same
                if when == created or (removed is None and record["removed_at"] is None)
            ),
            None,
        )
        if match is not None:
            importer.ids[record["link_id"]] = match
            importer.result.already["link"] += 1
            continue
        link = Link(
            workspace=importer.workspace,
            source_id=source,
            target_memory_id=target_memory,
            target_entity_id=target_entity,
            kind=record["kind"],
            weight=record["weight"],
            origin=record["origin"],
            agent_id=importer.agent_pk.get(record["agent"]),
            user_id=importer.user_pk.get(record["user"]),
            evidence=importer.translated(record["evidence"]),
            removed_at=parse_time(record["removed_at"]),
        )
        importer.ids[record["link_id"]] = link.link_id
        same.append((created, link.removed_at, link.link_id))
        made.append((link, record))
    Link.objects.bulk_create([link for link, _ in made], batch_size=1000)
    set_times(Link, [(link.pk, {"created_at": r["created_at"]}) for link, r in made])
    importer.result.stored["link"] += len(made)


@transaction.atomic
def threads(importer: Importer, records: list[dict[str, Any]]) -> None:
    for record in records:
        members = [
            (importer.memory_pk[m["memory"]], m)
            for m in record["members"]
            if m["memory"] in importer.memory_pk
        ]
        if not members or record["scope"] not in importer.scope_pk:
            importer.result.skipped["thread (every member erased here)"] += 1
            continue
        pks = [pk for pk, _ in members]
        if ThreadMember.objects.filter(memory_id__in=pks).exists():
            importer.result.already["thread"] += 1
            continue
        vectors = Memory.objects.filter(pk__in=pks).values_list("embedding", flat=True)
        found = [np.asarray(v) for v in vectors if v is not None]
        thread = Thread.objects.create(
            workspace=importer.workspace,
            scope_id=importer.scope_pk[record["scope"]],
            label=record["label"],
            title=record["title"],
            status=record["status"],
            first_seen=parse_time(record["first_seen"]),
            last_seen=parse_time(record["last_seen"]),
            size=record["size"],
            sessions=record["sessions"],
            cues=importer.translated(record["cues"]),
            words=record["words"],
            centroid=np.mean(found, axis=0) if found else None,
        )
        importer.ids[record["thread_id"]] = thread.thread_id
        ThreadMember.objects.bulk_create(
            ThreadMember(
                workspace=importer.workspace,
                thread=thread,
                memory_id=pk,
                evidence=importer.translated(member["evidence"]),
            )
            for pk, member in members
        )
        importer.result.stored["thread"] += 1


@transaction.atomic
def divergences(importer: Importer, records: list[dict[str, Any]]) -> None:
    made = []
    wanted = [importer.ids[r["link"]] for r in records if r["link"] and r["link"] in importer.ids]
    link_pk = dict(Link.objects.filter(link_id__in=wanted).values_list("link_id", "pk"))
    for record in records:
        ends = (importer.memory_pk.get(record["first"]), importer.memory_pk.get(record["second"]))
        if None in ends:
            importer.result.skipped["divergence (a memory erased here)"] += 1
            continue
        first, second = sorted(ends)
        if Divergence.objects.filter(first_id=first, second_id=second).exists():
            importer.result.already["divergence"] += 1
            continue
        link_id = importer.ids.get(record["link"]) if record["link"] else None
        divergence = Divergence(
            workspace=importer.workspace,
            first_id=first,
            second_id=second,
            link_id=link_pk.get(link_id),
            score=record["score"],
            detector=record["detector"],
            evidence=importer.translated(record["evidence"]),
            status=record["status"],
            reason=record["reason"],
            closed_by_id=importer.user_pk.get(record["closed_by"]),
            closed_at=parse_time(record["closed_at"]),
        )
        importer.ids[record["divergence_id"]] = divergence.divergence_id
        made.append((divergence, record))
    Divergence.objects.bulk_create([d for d, _ in made])
    set_times(Divergence, [(d.pk, {"created_at": r["created_at"]}) for d, r in made])
    importer.result.stored["divergence"] += len(made)
