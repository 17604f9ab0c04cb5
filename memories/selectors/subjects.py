"""What a hub's memories are about: "True now" grouped by the entity each memory is about
beside the page's own, and the roles the notes give the people named beside it.

A memory is about the entity it names that most of the page's memories true now also name
(its main subjects: a person, a product, another customer); one that names none of those is
about the page's own entity ("Orion Health itself"), or, on a conversation's page, about no
named entity. Each memory is in one group, so the counts add up to the memories true now.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from django.db.models import QuerySet

from memories.models import Entity, Link, Memory
from memories.relational.roles import person_names, role_in

#: How many memories a group shows (its count says how many more).
GROUP_SHOWN = 6
#: How many entities become groups of their own; the memories of the rest are grouped with
#: the page's own entity. An entity a single memory names is no group.
SUBJECTS_SHOWN = 6
SUBJECT_MIN = 2
#: How many memories true now are grouped, newest first (the page says when there are more).
GROUPED_MAX = 5_000
#: How many texts naming the people shown are read for their roles, newest first.
ROLE_TEXTS = 200


@dataclass
class Group:
    """Memories true now about ``entity`` (None: about the page's own entity, ``title``)."""

    title: str
    entity: Entity | None
    count: int
    memories: list[Memory]


def subject_groups(
    current: QuerySet[Memory], own: Entity | None, own_ids: list[int]
) -> tuple[list[Group], bool]:
    """``current`` (the page's memories true now) grouped by what each is about (module
    docstring), the page's own group first, then the largest; and whether there were more
    than ``GROUPED_MAX`` to group."""
    newest = current.order_by("-created_at", "-id").values_list("pk", flat=True)
    ids = list(newest[: GROUPED_MAX + 1])
    more = len(ids) > GROUPED_MAX
    ids = ids[:GROUPED_MAX]
    if not ids:
        return [], False
    named: dict[int, set[int]] = {}
    for source, target, merged in (
        Link.objects.filter(source_id__in=ids, target_entity__isnull=False, removed_at__isnull=True)
        .exclude(target_entity_id__in=own_ids)
        .values_list("source_id", "target_entity_id", "target_entity__merged_into_id")
    ):
        if (merged or target) not in own_ids:
            named.setdefault(source, set()).add(merged or target)
    shared = Counter(pk for pks in named.values() for pk in pks)
    subjects = [pk for pk, n in shared.most_common(SUBJECTS_SHOWN) if n >= SUBJECT_MIN]
    rank = {pk: i for i, pk in enumerate(subjects)}
    members: dict[int | None, list[int]] = {}
    for pk in ids:  # newest first, so each group's list is too
        about = min(named.get(pk, ()), key=lambda e: rank.get(e, len(rank)), default=None)
        members.setdefault(about if about in rank else None, []).append(pk)
    shown_ids = [pk for pks in members.values() for pk in pks[:GROUP_SHOWN]]
    shown = (
        Memory.objects.select_related("scope", "attributed_to")
        .defer(*Memory.UNREAD_ON_PAGES)
        .in_bulk(shown_ids)
    )
    entities = Entity.objects.in_bulk(subjects)
    own_title = f"{own.name} itself" if own else "Not about a named entity"
    order = [None, *sorted(subjects, key=lambda pk: (-len(members.get(pk, [])), rank[pk]))]
    groups = []
    for about in order:
        pks = members.get(about)
        if not pks:
            continue
        entity = entities.get(about) if about is not None else None
        title = f"{entity.name} ({entity.kind})" if entity else own_title
        groups.append(Group(title, entity, len(pks), [shown[pk] for pk in pks[:GROUP_SHOWN]]))
    return groups, more


def roles(current: QuerySet[Memory], people: list[Entity], places: list[str]) -> dict[int, str]:
    """The role the newest memory true now that gives one says each of ``people`` has
    (``memories.relational.roles``), by entity pk; ``places`` are the page entity's names
    ("CTO of Orion Health" is a CTO on Orion Health's page)."""
    if not people:
        return {}
    texts = (
        Link.objects.filter(
            source__in=current.order_by().values("pk"),
            target_entity__in=[p.pk for p in people],
            removed_at__isnull=True,
        )
        .order_by("-source__created_at", "-source_id")
        .values_list("target_entity_id", "source__text")[:ROLE_TEXTS]
    )
    by_pk = {p.pk: person_names(p.name, p.aliases) for p in people}
    found: dict[int, str] = {}
    for pk, text in texts:
        if pk not in found and (role := role_in(text, by_pk[pk], places)):
            found[pk] = role
    return found
