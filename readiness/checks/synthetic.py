"""The synthetic checks of S, T, A, R and E's anchor, on data they plant, and ``SYNTHETIC``:
every synthetic check by its id."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.test.utils import override_settings
from django.utils import timezone

from memories.models import Divergence, Link, Memory
from memories.operations import memory_remember, memory_search
from memories.selectors.divergences import divergences_visible
from memories.selectors.reader import Reader
from memories.selectors.sources import source_records
from memories.selectors.traversal import shortest_path, traverse
from memories.services import agent_create, entity_declare, memory_feedback, memory_forget
from memories.services.asymmetry import asymmetry_refresh
from memories.services.divergence import divergence_run
from readiness.checks.sandbox import Result, _agent
from readiness.checks.stories import saga_as_documented, threads_as_documented

TOPICS = [
    ("The Zephyr support contract renews every March.", "When does the Zephyr contract renew?"),
    ("The Lisbon office opens at eight every weekday.", "When does the Lisbon office open?"),
    ("Dana prefers invoices by email, never by post.", "How does Dana want invoices?"),
    ("The backup job runs nightly at two in the morning.", "When does the backup job run?"),
    ("Kwame leads the warehouse audit this quarter.", "Who leads the warehouse audit?"),
]


def significance_orders() -> Result:
    agent = _agent()
    wins = 0
    for n, (text, question) in enumerate(TOPICS):
        # Which of the two is written first alternates, so that the newer memory's edge (age,
        # ties) cannot pass the check for significance.
        first, second = (0.3, 0.95) if n % 2 else (0.95, 0.3)
        a = memory_remember(agent=agent, text=text, significance=first).memory
        b = memory_remember(agent=agent, text=text + " ", significance=second).memory
        high, low = (b, a) if second > first else (a, b)
        order = [
            h.memory.pk for h in memory_search(Reader.of_agent(agent), query=question, limit=5)
        ]
        wins += high.pk in order and (
            low.pk not in order or order.index(high.pk) < order.index(low.pk)
        )
    return wins / len(TOPICS), {"trials": len(TOPICS)}


def as_of_finds_the_valid_memory() -> Result:
    agent = _agent()
    now = timezone.now()
    right = 0
    for n, (text, question) in enumerate(TOPICS):
        start = now - timedelta(days=40 + n)
        old = memory_remember(agent=agent, text=text, created_at=start, valid_from=start).memory
        new = memory_remember(
            agent=agent,
            text="Update: " + text,
            supersedes=old.mem_id,
            valid_from=now - timedelta(days=10),
        ).memory
        then = {
            h.memory.pk
            for h in memory_search(
                Reader.of_agent(agent), query=question, as_of=now - timedelta(days=20)
            )
        }
        today = {h.memory.pk for h in memory_search(Reader.of_agent(agent), query=question)}
        right += old.pk in then and new.pk not in then and new.pk in today and old.pk not in today
    return right / len(TOPICS), {"trials": len(TOPICS)}  # fmt: skip


def reply_found_by_its_episode() -> Result:
    agent = _agent()
    found = 0
    pairs = [
        ("Where do we hold the offsite this year?", "In Lisbon, near the old tram depot."),
        ("Which vendor fixes the cold storage units?", "Frostline, they answer within a day."),
        ("What did the auditors flag?", "Missing signatures on three pallet receipts."),
    ]
    for n, (question, reply) in enumerate(pairs):
        memory_remember(agent=agent, text=question, session=f"s{n}")
        answer = memory_remember(agent=agent, text=reply, session=f"s{n}").memory
        words = question.rstrip("?").split()[-2:]  # its last two words, e.g. "this year"
        hits = memory_search(Reader.of_agent(agent), query=" ".join(words), limit=2)
        found += answer.pk in {h.memory.pk for h in hits}
    return found / len(pairs), {"trials": len(pairs)}


def links_filter_as_documented() -> Result:
    """related_to (either way, by type), entity (by alias), min_r (visible, active ends only):
    each trial passes when the search returns exactly the memories the filter documents."""
    agent = _agent()
    other, _ = agent_create(workspace_slug=agent.workspace.slug, name="other")
    entity_declare(
        workspace_id=agent.workspace_id, name="Frostline", kind="customer", aliases=["Frost Line"]
    )

    def write(text: str, **fields) -> Any:
        return memory_remember(agent=agent, text=text, **fields).memory

    hub = write("The cold storage contract renews in May.")
    part = write(
        "Cold storage pricing rises in May.", links=[{"to": hub.mem_id, "type": "part_of"}]
    )
    support = write(
        "Finance signed off the cold storage renewal.",
        links=[{"to": hub.mem_id, "type": "supports"}],
    )
    write("Frost Line answers cold storage calls within a day.")
    write("Cold storage audits happen yearly.")  # linked to nothing
    hidden = memory_remember(agent=other, text="Another agent's private cold storage note.").memory
    Link.objects.create(  # a link from a memory the checker cannot see
        workspace_id=agent.workspace_id,
        source=hidden,
        target_memory=support,
        kind="supports",
        origin=Link.Origin.WRITER,
    )

    def found(**filters) -> set[str]:
        hits = memory_search(Reader.of_agent(agent), **filters, query="cold storage", limit=20)
        return {h.memory.mem_id for h in hits}

    frostline = {
        m.mem_id
        for m in Memory.objects.filter(workspace=agent.workspace, text__startswith="Frost Line")
    }
    trials = [
        found(related_to=hub.mem_id) == {part.mem_id, support.mem_id},
        found(related_to=hub.mem_id, link_types=["supports"]) == {support.mem_id},
        found(related_to=part.mem_id) == {hub.mem_id},
        found(entity="Frostline") == frostline,
        found(min_r=2) == {hub.mem_id},  # the hidden memory's link does not count for support
        found(min_r=0) >= {hub.mem_id, part.mem_id, support.mem_id},
    ]
    return sum(trials) / len(trials), {"trials": len(trials), "passed": sum(trials)}


def traversal_as_documented() -> Result:
    """traverse (by depth, direction, type) and the shortest path: each trial passes when it
    returns exactly the documented nodes and steps, never a memory the reader may not see nor
    one reached only through such a memory."""
    agent = _agent()
    other, _ = agent_create(workspace_slug=agent.workspace.slug, name="other")

    def write(who, text: str, **fields) -> Any:
        return memory_remember(agent=who, text=text, **fields).memory

    hub = write(agent, "The cold storage contract renews in May.")
    support = write(
        agent, "Finance approved the renewal.", links=[{"to": hub.mem_id, "type": "supports"}]
    )
    detail = write(
        agent, "The budget sits with operations.", links=[{"to": support.mem_id, "type": "part_of"}]
    )
    hidden = write(other, "A private note.")
    # Seen by the checker, linked only from the hidden note (links no service would let the
    # other agent make to memories it cannot see: made directly).
    behind = write(agent, "Reached only through the private note.")
    for target, kind in ((hub, "supports"), (behind, "relates_to")):
        Link.objects.create(
            workspace_id=agent.workspace_id,
            source=hidden,
            target_memory=target,
            kind=kind,
            origin=Link.Origin.WRITER,
        )
    reader = Reader.of_agent(agent)

    def reached(start, **options) -> dict[str, tuple[int, list[tuple[str, str]]]]:
        found = traverse(reader, start, **options)
        return {
            r.node.mem_id: (r.depth, [(step.kind, step.direction) for step in r.steps])
            for r in found
            if isinstance(r.node, Memory)
        }

    def path(start, end, **options) -> list[tuple[str, str]] | None:
        found = shortest_path(reader, start, end, **options)
        return None if found is None else [(step.kind, step.direction) for step in found.steps]

    trials = [
        reached(hub, depth=1) == {support.mem_id: (1, [("supports", "in")])},
        reached(hub, depth=2)
        == {
            support.mem_id: (1, [("supports", "in")]),
            detail.mem_id: (2, [("supports", "in"), ("part_of", "in")]),
        },
        reached(detail, depth=3, direction="out")
        == {
            support.mem_id: (1, [("part_of", "out")]),
            hub.mem_id: (2, [("part_of", "out"), ("supports", "out")]),
        },
        reached(hub, depth=2, link_types=["part_of"]) == {},
        path(detail, hub) == [("part_of", "out"), ("supports", "out")],
        path(detail, hub, depth=1) is None,
        path(hub, behind) is None,  # only through a memory the checker may not see
    ]
    return sum(trials) / len(trials), {"trials": len(trials), "passed": sum(trials)}


def divergence_as_documented() -> Result:
    """Planted pairs by two writers about one customer: each disagreement (a renewal month, a
    plan, an owner, an amount, a negation) is flagged with a contradicts link, each agreement
    and each disagreement by one writer is not, and a divergence with a memory a reader may not
    see is not shown to that reader."""
    slug = f"readiness-{secrets.token_hex(4)}"
    first, second = (
        agent_create(workspace_slug=slug, name=name, shared_scopes=["team:accounts"])[0]
        for name in ("first", "second")
    )
    third, _ = agent_create(workspace_slug=slug, name="third")

    def write(who, name: str, text: str, scope: str = "team:accounts") -> Memory:
        return memory_remember(
            agent=who, text=text, scope=scope, entities=[{"name": name, "type": "customer"}]
        ).memory

    disagreeing = [
        ("Alder", "Alder renews in March.", "Alder renews in June."),
        ("Birch", "Birch is on the gold plan.", "Birch is on the silver plan."),
        ("Cedar", "The Cedar account is owned by Dana.", "The Cedar account is owned by Ravi."),
        ("Dogwood", "The Dogwood deal is worth $40k.", "The Dogwood deal is worth $65k."),
        ("Elm", "Elm will renew the hosting contract.", "Elm will not renew the hosting contract."),
    ]
    agreeing = [
        ("Fir", "Fir renews its support contract in May.", "Fir's support renewal is in May."),
        ("Gum", "Gum is on the bronze plan.", "Gum stays on the bronze plan this year."),
    ]
    expected = {
        (write(first, name, one), write(second, name, other)): flagged
        for flagged, pairs in ((True, disagreeing), (False, agreeing))
        for name, one, other in pairs
    }
    # One writer disagreeing with itself is no divergence.
    lone = (
        write(first, "Hazel", "Hazel renews in April."),
        write(first, "Hazel", "Hazel renews in October."),
    )
    expected[lone] = False
    # Between a shared memory and a third agent's private one: flagged, shown to no reader
    # who cannot see both.
    hidden = (
        write(second, "Ivy", "Ivy is on the starter plan."),
        write(third, "Ivy", "Ivy is on the enterprise plan.", scope="private:third"),
    )
    with override_settings(MM_DIVERGENCE=True, MM_ENTITY_EXTRACTION=False):
        divergence_run(workspace=first.workspace)
    found = {
        (d.first_id, d.second_id): d
        for d in Divergence.objects.filter(workspace=first.workspace).select_related("link")
    }
    trials = []
    for (one, other), flagged in expected.items():
        divergence = found.get((one.pk, other.pk))
        trials.append(
            (divergence is not None) == flagged
            and (divergence is None or divergence.link.kind == "contradicts")
        )
    secret = found.get((hidden[0].pk, hidden[1].pk))
    trials.append(secret is not None)
    with override_settings(MM_DIVERGENCE=True):  # an agent's read of the opt-in feature
        shown_to = [
            agent.name
            for agent in (first, second, third)
            if secret is not None
            and divergences_visible(Reader.of_agent(agent)).filter(pk=secret.pk).exists()
        ]
    trials.append(secret is not None and shown_to == [])
    return sum(trials) / len(trials), {"trials": len(trials), "passed": sum(trials)}


def asymmetry_as_documented() -> Result:
    """Cues set who made a claim and how; the perspective, attributed_to and source_kind
    filters return what they say; after feedback a right source's record and the A scores
    that follow rise above a wrong one's; forgetting stops counting; another agent's private
    memories count for no one else."""
    agent = _agent()
    other, _ = agent_create(workspace_slug=agent.workspace.slug, name="other")

    def write(text: str, who=None, **fields) -> Memory:
        return memory_remember(agent=who or agent, text=text, **fields).memory

    cued = write("According to Maria Lopez, the Zephyr renewal moves to April.")
    guess = write("I think the Zephyr renewal moves to April.")
    tool = write("The CRM returned April as the Zephyr renewal month.")
    for_user = write("The Zephyr renewal moves to April, for the user.", perspective="user")
    right = [write(f"Ledger figure {n} for Zephyr.", source="ledger") for n in range(5)]
    wrong = [write(f"Rumour {n} about Zephyr.", source="rumours") for n in range(5)]
    write("Private rumour about Zephyr.", who=other, source="rumours")
    for memory in right:
        memory_feedback(agent=agent, mem_id=memory.mem_id, action="important", reason="checked")
    for memory in wrong:
        memory_feedback(agent=agent, mem_id=memory.mem_id, action="demote", reason="wrong")
    asymmetry_refresh(workspace_id=agent.workspace_id)
    reliable = write("Zephyr renews in April.", source="ledger")
    doubtful = write("Zephyr renews in April!", source="rumours")

    def found(**filters) -> set[str]:
        hits = memory_search(Reader.of_agent(agent), **filters, query="Zephyr renewal", limit=20)
        return {h.memory.mem_id for h in hits}

    mine = source_records(Reader.of_agent(agent))
    ledger, rumours = mine.sources[("writer", "ledger")], mine.sources[("writer", "rumours")]
    memory_forget(agent=agent, mem_id=right[0].mem_id, reason="a duplicate")
    after = source_records(Reader.of_agent(agent))
    trials = [
        cued.source_kind == "stated" and cued.attributed_to.name == "Maria Lopez",
        cued.attribution.get("attributed_to", {}).get("origin") == "cue",
        guess.source_kind == "inferred" and tool.source_kind == "tool",
        found(perspective="user") == {for_user.mem_id},
        found(attributed_to="Maria Lopez") == {cued.mem_id},
        found(source_kind="inferred") == {guess.mem_id},
        ledger.estimate > mine.prior > rumours.estimate,
        rumours.memories == 6,  # its 5 and the doubtful one; not the other agent's private one
        reliable.a_score > doubtful.a_score,
        after.sources[("writer", "ledger")].right == 4,
    ]
    failed = [n for n, ok in enumerate(trials) if not ok]
    return sum(trials) / len(trials), {
        "trials": len(trials),
        "passed": sum(trials),
        "failed": failed,
    }


SYNTHETIC: dict[str, Callable[[], Result]] = {
    "s.core.significance_orders": significance_orders,
    "t.core.as_of": as_of_finds_the_valid_memory,
    "e.anchor.reply_found": reply_found_by_its_episode,
    "r.links.filters": links_filter_as_documented,
    "r.traversal.paths": traversal_as_documented,
    "r.divergence.flags": divergence_as_documented,
    "e.threads.grouping": threads_as_documented,
    "e.saga.story": saga_as_documented,
    "a.encoding.attribution": asymmetry_as_documented,
}
