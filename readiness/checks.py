"""The readiness checks that can run here, and ``run_checks`` which records their evidence.

Each check writes its data into a workspace of its own inside a transaction that is rolled
back: nothing it wrote stays, only the evidence row (recorded after the rollback).
"""

from __future__ import annotations

import functools
import hashlib
import secrets
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
from django.db import transaction
from django.test.utils import override_settings
from django.utils import timezone

from memories.embeddings import get_embedder
from memories.models import Divergence, Link, Memory
from memories.scorer import bundled_scorer, calibration
from memories.search import memory_search
from memories.selectors import visible_scope_ids
from memories.selectors.divergences import divergences_visible
from memories.selectors.relations import hub_entities, joined_within_two_links
from memories.selectors.sources import source_records
from memories.selectors.traversal import shortest_path, traverse
from memories.services import (
    agent_create,
    entity_declare,
    memory_feedback,
    memory_forget,
    memory_remember,
    memory_remember_bulk,
)
from memories.services.asymmetry import asymmetry_refresh
from memories.services.divergence import divergence_run
from readiness.evidence import engine_version, record
from readiness.liar import measure as measure_liar
from readiness.liar import read as read_liar
from readiness.locomo import memory_text, read, turn_prints
from readiness.metrics import auc
from readiness.models import EvaluationRun
from readiness.pairs import read as read_pairs
from readiness.pairs import score
from readiness.registry import Capability, Check, all_checks

Result = tuple[float, dict[str, Any]]
#: An entity that this share of a conversation's memories mention is a hub (a speaker's name in
#: every turn): it joins nearly everything and so says nothing. The gated R check counts the
#: questions joined without hubs, and reports beside it the share with them and the share
#: without hubs and without ``follows``.
HUB_SHARE = 0.10


class _Rollback(Exception):
    pass


def _sandboxed(run: Callable[[], Any]) -> Any:
    """Run in a transaction that is always rolled back; return what ``run`` returned."""
    outcome: list[Any] = []
    try:
        with transaction.atomic():
            outcome.append(run())
            raise _Rollback
    except _Rollback:
        pass
    return outcome[0]


def _agent():
    return agent_create(workspace_slug=f"readiness-{secrets.token_hex(4)}", name="checker")[0]


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
        order = [h.memory.pk for h in memory_search(agent=agent, query=question, limit=5)]
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
            for h in memory_search(agent=agent, query=question, as_of=now - timedelta(days=20))
        }
        today = {h.memory.pk for h in memory_search(agent=agent, query=question)}
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
        hits = memory_search(agent=agent, query=" ".join(words), limit=2)
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
        hits = memory_search(agent=agent, query="cold storage", limit=20, **filters)
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
    scopes = visible_scope_ids(agent)

    def reached(start, **options) -> dict[str, tuple[int, list[tuple[str, str]]]]:
        found = traverse(start, workspace_id=agent.workspace_id, scope_ids=scopes, **options)
        return {
            r.node.mem_id: (r.depth, [(step.kind, step.direction) for step in r.steps])
            for r in found
            if isinstance(r.node, Memory)
        }

    def path(start, end, **options) -> list[tuple[str, str]] | None:
        found = shortest_path(
            start, end, workspace_id=agent.workspace_id, scope_ids=scopes, **options
        )
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
    shown_to = [
        agent.name
        for agent in (first, second, third)
        if secret is not None and divergences_visible(agent=agent).filter(pk=secret.pk).exists()
    ]
    trials.append(secret is not None and shown_to == [])
    return sum(trials) / len(trials), {"trials": len(trials), "passed": sum(trials)}


def pairs_checks(path: Path) -> dict[str, Result]:
    """The divergence detector's AUC on labelled statement pairs (ProSeCCo's shape)."""
    scored = score(read_data(read_pairs, path, "pairs in ProSeCCo's shape"))
    labels = scored.labels
    if labels.all() or not labels.any():
        raise NotMeasurable(f"{path.name}: an AUC needs pairs of both labels")
    return {
        "r.divergence.pairs_auc": (
            auc(scored.scores, labels),
            {
                "pairs": len(labels),
                "positives": int(labels.sum()),
                "cosine_auc": round(auc(scored.similarities, labels), 4),
            },
        )
    }


#: Two stories told across four sessions between other talk, and one in another reader's scope.
POTTERY = [
    "I started a pottery class at the studio; we shape a bowl for the kiln.",
    "My first pottery bowl cracked in the kiln at the studio.",
    "The pottery teacher at the studio showed me how to glaze a bowl before the kiln.",
    "I will bring my glazed pottery bowl from the studio kiln to the show next week.",
]
ROOF = [
    "The roofer found a leak above the attic window.",
    "The roofer quoted a new flashing for the attic leak.",
    "We are waiting for the roofer to fix the attic flashing.",
    "The roofer fixed the attic leak; the flashing is done.",
]
OTHER = [
    "Lunch was a tomato soup with bread.",
    "The train to work was late again this morning.",
    "My sister called about her birthday dinner plans.",
    "The weather turned cold and windy in the evening.",
]
GARDEN = [
    "The gardener planted tulip bulbs along the fence.",
    "The gardener says the tulip bulbs by the fence need compost.",
    "Are the tulip bulbs by the fence coming up yet?",
]


def _stories() -> tuple[Any, Any, dict[str, list[Memory]]]:
    """Alice's stories in a shared scope, bob's in his private one; threads phase run."""
    from consolidation.services import consolidation_execute, consolidation_start

    slug = f"readiness-{secrets.token_hex(4)}"
    alice, bob = (
        agent_create(workspace_slug=slug, name=name, shared_scopes=["team:home"])[0]
        for name in ("alice", "bob")
    )
    start = timezone.now() - timedelta(days=60)
    written: dict[str, list[Memory]] = {"pottery": [], "roof": [], "other": [], "garden": []}
    for session in range(4):
        stories = (("pottery", POTTERY), ("other", OTHER), ("roof", ROOF))
        for minute, (name, lines) in enumerate(stories):
            written[name].append(
                memory_remember(
                    agent=alice,
                    text=lines[session],
                    scope="team:home",
                    memory_type="episodic",
                    session=f"session-{session}",
                    created_at=start + timedelta(days=7 * session, minutes=minute),
                ).memory
            )
        if session < len(GARDEN):
            written["garden"].append(
                memory_remember(
                    agent=bob,
                    text=GARDEN[session],
                    memory_type="episodic",
                    session=f"garden-{session}",
                    created_at=start + timedelta(days=7 * session, minutes=5),
                ).memory
            )
    with override_settings(MM_OPEN_THREADS=True):
        run = consolidation_execute(
            consolidation_start(workspace=alice.workspace, trigger="command", phases=["threads"])
        )
    if run.status != "done":
        raise RuntimeError(run.error)
    return alice, bob, written


def threads_as_documented() -> Result:
    """Stories told across sessions are grouped into their own threads (other talk kept out),
    open or resolved as their last cues say, no thread crosses scopes, and a reader's compiled
    file lists the open threads of the scopes it sees and no other."""
    from memories.compile import compiled_memory_file
    from memories.models import Thread, ThreadMember

    alice, bob, written = _stories()
    thread_of = dict(
        ThreadMember.objects.filter(workspace=alice.workspace).values_list("memory_id", "thread")
    )
    threads = {name: {thread_of.get(m.pk) for m in ms} for name, ms in written.items()}
    trials = [
        len(threads["pottery"]) == 1 and None not in threads["pottery"],
        len(threads["roof"]) == 1 and None not in threads["roof"],
        len(threads["garden"]) == 1 and None not in threads["garden"],
        threads["pottery"].isdisjoint(threads["roof"]),
        not (threads["other"] & (threads["pottery"] | threads["roof"])),
    ]
    by_pk = Thread.objects.in_bulk({t for ts in threads.values() for t in ts if t})
    pottery, roof, garden = (
        by_pk.get(next(iter(threads[n]))) for n in ("pottery", "roof", "garden")
    )
    trials += [
        pottery is not None and pottery.status == "open",
        roof is not None and roof.status == "resolved",
        garden is not None and garden.status == "open" and garden.scope_id == bob.private_scope.pk,
    ]
    with override_settings(MM_OPEN_THREADS=True):
        seen = {
            agent.name: set(compiled_memory_file(workspace=agent.workspace, agent=agent).threads)
            for agent in (alice, bob)
        }
    trials += [
        pottery is not None and seen["alice"] == {pottery.thread_id},
        garden is not None
        and pottery is not None
        and seen["bob"] == {pottery.thread_id, garden.thread_id},
    ]
    return sum(trials) / len(trials), {"trials": len(trials), "passed": sum(trials)}


def saga_as_documented() -> Result:
    """A query recalls its whole story in time order with a summary made of the story's own
    sentences, and never what the reader may not see. The search gives one hit: the rest of
    the story comes through its thread."""
    from consolidation.saga import saga_recall

    alice, bob, written = _stories()
    trials = []
    with override_settings(MM_SAGA=True, MM_SAGA_HITS=1):
        for name, query in (("roof", "the leak in the attic"), ("pottery", "my pottery bowl")):
            saga = saga_recall(agent=alice, query=query)
            got = [m.pk for m in saga.memories]
            story = [m.pk for m in written[name]]
            trials.append([pk for pk in got if pk in story] == story)
            in_time = sorted(saga.memories, key=lambda m: (m.created_at, m.pk))
            trials.append(got == [m.pk for m in in_time])
            texts = {m.pk: m.text for m in saga.memories}
            trials.append(
                bool(saga.summary)
                and all(sentence in texts[memory.pk] for memory, sentence in saga.summary)
            )
        hidden = saga_recall(agent=alice, query="tulip bulbs by the fence")
        trials.append(not {m.pk for m in hidden.memories} & {m.pk for m in written["garden"]})
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
        hits = memory_search(agent=agent, query="Zephyr renewal", limit=20, **filters)
        return {h.memory.mem_id for h in hits}

    mine = source_records(agent.workspace_id, visible_scope_ids(agent))
    ledger, rumours = mine.sources[("writer", "ledger")], mine.sources[("writer", "rumours")]
    memory_forget(agent=agent, mem_id=right[0].mem_id, reason="a duplicate")
    after = source_records(agent.workspace_id, visible_scope_ids(agent))
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


def liar_checks(train: Path, measured: Path) -> dict[str, Result]:
    """The A score's AUC on LIAR-shaped statements (``readiness.liar``), with the kept model:
    the training statements loaded and their verdicts replayed, the measured ones written;
    all rolled back."""

    def run() -> Result:
        agent = _agent()
        shape = "LIAR-shaped"
        result = measure_liar(
            agent, read_data(read_liar, train, shape), read_data(read_liar, measured, shape)
        )
        return result.auc, {
            "statements": result.statements,
            "positives": result.positives,
            "negatives": result.negatives,
            "baselines": {k: round(v, 4) for k, v in result.baselines.items()},
            "train": train.name,
            "train_sha256": hashlib.sha256(train.read_bytes()).hexdigest(),
        }

    return {"a.encoding.liar_auc": _sandboxed(run)}


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


#: A conversation whose turns are at least this share of the scorer's fit set's turns is one
#: it was fitted on (a copy, cut or renamed); short common turns ("Thanks!") match far fewer.
FITTED_SHARE = 0.5


def fitted(conversation) -> bool:
    """Whether the bundled scorer was fitted on this conversation: named in its calibration's
    fit set, or saying what those say (a fitted conversation under another name, whole or in
    part)."""
    fit = calibration()
    if conversation.sample_id in set(fit["fit_on"]):
        return True
    prints = turn_prints(conversation)
    known = _fit_turns()
    return bool(prints) and sum(p in known for p in prints) >= FITTED_SHARE * len(prints)


@functools.cache
def _fit_turns() -> frozenset[str]:
    return frozenset(calibration().get("fit_on_turns", ()))


def locomo_checks(path: Path, conversations: int | None) -> dict[str, Result]:
    """Load LoCoMo conversations (bulk, with sessions and dates), search every question, and
    measure the scorer on every conversation it was not fitted on; all rolled back. A check
    the conversations give nothing to measure is left out, with why under ``_not_run``."""

    def run() -> dict[str, Result]:
        chosen = read_data(read, path, "LoCoMo-shaped")[:conversations]
        recalls: dict[int, list[float]] = {}
        graph_recalls: dict[int, list[float]] = {}  # the same searches with expand: graph
        # Each multi-hop question, joined: without the hub entities (the check's value); with
        # them; without them and without follows.
        joined: list[tuple[bool, bool, bool]] = []
        scored: dict[str, tuple[list[float], list[bool]]] = {d: ([], []) for d in "str"}
        # Per conversation: evidence pairs, those co-threaded, all pairs, those co-threaded.
        threaded: list[tuple[int, int, int, int]] = []
        sagas: list[tuple[float, float]] = []  # multi-hop: (saga recall@20, plain recall@20)
        measured: list[str] = []  # the conversations the scorer is measured on
        for conversation in chosen:
            agent = _agent()
            items = [
                {
                    "text": memory_text(turn, True),
                    "memory_type": "episodic",
                    "created_at": turn.written_at,
                    "session": f"session_{turn.session}",
                    "metadata": {"dia_id": turn.dia_id},
                }
                for turn in conversation.turns
            ]
            for first in range(0, len(items), 1000):
                memory_remember_bulk(agent=agent, items=items[first : first + 1000])
            threaded.append(_cothreading(agent, conversation))
            dia = dict(
                Memory.objects.filter(workspace=agent.workspace).values_list(
                    "pk", "metadata__dia_id"
                )
            )
            by_dia = {dia_id: pk for pk, dia_id in dia.items()}
            hubs = hub_entities(agent.workspace_id, HUB_SHARE)
            for question in conversation.questions:
                if question.category == 1 and len(question.evidence) > 1:
                    turns = [by_dia[d] for d in question.evidence if d in by_dia]
                    joined.append(
                        (
                            joined_within_two_links(turns, without=hubs),
                            joined_within_two_links(turns),
                            joined_within_two_links(turns, follows=False, without=hubs),
                        )
                    )
                vector = get_embedder().embed([question.text])[0]
                if question.category == 1:
                    sagas.append(_saga_gain(agent, question, vector, dia))
                for expand, found in ((None, recalls), ("graph", graph_recalls)):
                    hits = memory_search(
                        agent=agent,
                        query=question.text,
                        query_vector=vector,
                        limit=10,
                        **({"expand": expand} if expand else {}),
                    )
                    got = {dia[h.memory.pk] for h in hits}
                    recall = len(got & question.evidence) / len(question.evidence)
                    found.setdefault(question.category, []).append(recall)
            if not fitted(conversation):
                _score(agent, conversation, scored, bundled_scorer())
                measured.append(conversation.sample_id)
        results: dict[str, Result] = {}
        every = [r for rs in recalls.values() for r in rs]
        if every:
            results["s.core.locomo_recall"] = (float(np.mean(every)), {"questions": len(every)})
        if recalls.get(2):
            results["t.core.locomo_temporal_recall"] = (
                float(np.mean(recalls[2])),
                {"questions": len(recalls[2])},
            )
        if recalls.get(1):
            gains = {
                category: float(np.mean(graph_recalls[category]) - np.mean(plain))
                for category, plain in recalls.items()
            }
            overall = [r for rs in graph_recalls.values() for r in rs]
            results["r.traversal.locomo_graph_multihop"] = (
                gains[1],
                {
                    "questions": len(recalls[1]),
                    "multihop_recall_plain": round(float(np.mean(recalls[1])), 4),
                    "multihop_recall_graph": round(float(np.mean(graph_recalls[1])), 4),
                    "overall_gain": round(float(np.mean(overall) - np.mean(every)), 4),
                    "gain_by_category": {str(c): round(g, 4) for c, g in sorted(gains.items())},
                },
            )
        if joined:
            results["r.links.locomo_multihop_joined"] = (
                sum(value for value, _, _ in joined) / len(joined),
                {
                    "questions": len(joined),
                    "with_hubs": round(sum(every for _, every, _ in joined) / len(joined), 4),
                    "without_follows": round(sum(bare for _, _, bare in joined) / len(joined), 4),
                    "hub_share": HUB_SHARE,
                },
            )
        pairs, together, every_pair, every_together = (
            sum(t[i] for t in threaded) for i in range(4)
        )
        if pairs and every_pair:
            recall, false = together / pairs, every_together / every_pair
            results["e.threads.locomo_cothreading"] = (
                recall - false,
                {
                    "evidence_pairs": pairs,
                    "pair_recall": round(recall, 4),
                    "false_grouping": round(false, 4),
                },
            )
        if sagas:
            saga_recall_mean = float(np.mean([saga for saga, _ in sagas]))
            plain_recall_mean = float(np.mean([plain for _, plain in sagas]))
            results["e.saga.locomo_multihop_gain"] = (
                saga_recall_mean - plain_recall_mean,
                {
                    "questions": len(sagas),
                    "saga_recall@20": round(saga_recall_mean, 4),
                    "plain_recall@20": round(plain_recall_mean, 4),
                },
            )
        skipped = [c.sample_id for c in chosen if c.sample_id not in measured]
        for dim, (scores, labels) in scored.items():
            if scores and any(labels) and not all(labels):
                results[f"{dim}.scorer.locomo_auc"] = (
                    auc(np.array(scores), np.array(labels)),
                    {
                        "memories": len(scores),
                        "positives": int(sum(labels)),
                        "measured_on": measured,
                        "fitted_on_skipped": skipped,
                    },
                )
        results["_conversations"] = (len(chosen), {})
        results["_not_run"] = (None, _locomo_not_run(results, measured, skipped, scored))
        return results

    return _sandboxed(run)


def _locomo_not_run(
    results: dict[str, Result],
    measured: list[str],
    skipped: list[str],
    scored: dict[str, tuple[list[float], list[bool]]],
) -> dict[str, str]:
    """Why each LoCoMo check missing from ``results`` could not run on these conversations."""
    reasons = {
        "s.core.locomo_recall": "no question names evidence turns that exist",
        "t.core.locomo_temporal_recall": "no temporal question (category 2) with evidence",
        "r.traversal.locomo_graph_multihop": "no multi-hop question (category 1) with evidence",
        "r.links.locomo_multihop_joined": "no multi-hop question (category 1) with evidence "
        "in two or more turns",
        "e.threads.locomo_cothreading": "no multi-hop question's evidence turns are told in "
        "different sessions",
        "e.saga.locomo_multihop_gain": "no multi-hop question (category 1) with evidence",
    }
    labels = {"s": "of any question", "t": "of a temporal question", "r": "of a multi-hop question"}
    for dim in "str":
        if not measured:
            reasons[f"{dim}.scorer.locomo_auc"] = (
                "the bundled scorer was fitted on every conversation given "
                f"({', '.join(skipped)}); it is measured only on others"
            )
        else:
            positives = sum(scored[dim][1])
            reasons[f"{dim}.scorer.locomo_auc"] = (
                f"an AUC needs turns that are evidence {labels[dim]} and turns that are not; "
                f"the conversations it was not fitted on ({', '.join(measured)}) have "
                f"{positives} of {len(scored[dim][1])}"
            )
    return {check_id: why for check_id, why in reasons.items() if check_id not in results}


def _cothreading(agent, conversation) -> tuple[int, int, int, int]:
    """The threads phase over the conversation's workspace: (multi-hop evidence pairs in
    different sessions, those in one thread, all pairs of turns in different sessions, those
    in one thread)."""
    from consolidation.services import consolidation_execute, consolidation_start
    from memories.models import ThreadMember

    with override_settings(MM_OPEN_THREADS=True):
        run = consolidation_execute(
            consolidation_start(workspace=agent.workspace, trigger="command", phases=["threads"])
        )
    if run.status != "done":
        raise RuntimeError(f"the threads phase failed: {run.error}")
    thread_of = dict(
        ThreadMember.objects.filter(workspace=agent.workspace).values_list(
            "memory__metadata__dia_id", "thread_id"
        )
    )
    session = {turn.dia_id: turn.session for turn in conversation.turns}
    pairs = together = 0
    for question in conversation.questions:
        if question.category != 1:
            continue
        evidence = sorted(d for d in question.evidence if d in session)
        for index, first in enumerate(evidence):
            for second in evidence[index + 1 :]:
                if session[first] != session[second]:
                    pairs += 1
                    together += first in thread_of and thread_of.get(first) == thread_of.get(second)
    per_session: dict[int, int] = {}
    for number in session.values():
        per_session[number] = per_session.get(number, 0) + 1
    turns = len(session)
    every = (turns * turns - sum(n * n for n in per_session.values())) // 2
    members: dict[int, dict[int, int]] = {}
    for dia_id, thread in thread_of.items():
        by_session = members.setdefault(thread, {})
        by_session[session[dia_id]] = by_session.get(session[dia_id], 0) + 1
    every_together = sum(
        (sum(c.values()) ** 2 - sum(n * n for n in c.values())) // 2 for c in members.values()
    )
    return pairs, together, every, every_together


def _saga_gain(agent, question, vector, dia) -> tuple[float, float]:
    """(saga recall, plain recall) of the question's evidence in 20 memories."""
    from consolidation.saga import saga_recall

    with override_settings(MM_SAGA=True):
        saga = saga_recall(agent=agent, query=question.text, limit=20, query_vector=vector)
    plain = memory_search(agent=agent, query=question.text, query_vector=vector, limit=20)
    found = [{dia[m.pk] for m in saga.memories}, {dia[h.memory.pk] for h in plain}]
    return tuple(len(f & question.evidence) / len(question.evidence) for f in found)


def _score(agent, conversation, scored, scorer) -> None:
    rows = list(
        Memory.objects.filter(workspace=agent.workspace)
        .order_by("pk")
        .values_list("text", "embedding", "metadata__dia_id")
    )
    evidence = {category: set() for category in (None, 1, 2)}
    for question in conversation.questions:
        evidence[None] |= question.evidence
        if question.category in (1, 2):
            evidence[question.category] |= question.evidence
    predicted = scorer.predict([t for t, _, _ in rows], np.array([v for _, v, _ in rows]))
    for dim, category in (("s", None), ("t", 2), ("r", 1)):
        scored[dim][0].extend(predicted[dim].tolist())
        scored[dim][1].extend(dia in evidence[category] for _, _, dia in rows)


class NotMeasurable(ValueError):
    """The data given cannot measure a check (a file of another shape, one label only): the
    check is not run, which is not a failure of what it measures."""


#: What each kind of outside data is and the options that give it.
NEEDS = {
    "locomo": "--locomo FILE (LoCoMo-shaped conversations)",
    "pairs": "--pairs FILE (labelled contradiction pairs, ProSeCCo's shape)",
    "liar": "--liar-train FILE --liar-eval FILE (LIAR-shaped fact-checked statements)",
}


def read_data(reader: Callable[[Path], Any], path: Path, shape: str) -> Any:
    """``reader(path)``, or NotMeasurable naming the file and what is wrong with it."""
    try:
        return reader(path)
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        problem = f"no field {exc}" if isinstance(exc, KeyError) else str(exc)
        raise NotMeasurable(f"{path.name} is not {shape}: {problem}") from exc


def _failed(exc: Exception, needs: str) -> dict[str, Result]:
    """Every gated check on that data, failed to run with this error."""
    error = {"error": f"{type(exc).__name__}: {exc}"}
    return {c.id: (None, error) for _, c in all_checks() if c.needs == needs}


def describe(path: Path) -> dict[str, Any]:
    """A data file as its runs record it: name, sha256 and size in bytes."""
    data = path.read_bytes()
    return {"file": path.name, "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def _record_gated(
    data: dict[str, Any],
    results: dict[str, Result],
    say: Callable[[str], None],
    more: dict[str, Any],
    what: str,
    run: EvaluationRun,
) -> list[Any]:
    """Record each gated result with its dataset's name, sha256 and size (and ``more`` in
    its detail)."""
    by_id = {check.id: (c, check) for c, check in all_checks()}
    recorded = []
    for check_id, (value, detail) in results.items():
        capability, check = by_id[check_id]
        recorded.append(
            record(
                capability,
                check,
                value,
                dataset=data["file"],
                dataset_sha256=data["sha256"],
                dataset_bytes=data["bytes"],
                detail={**detail, **more},
                run=run,
            )
        )
        shown = value if value is None else round(value, 3)
        say(f"{check_id}: {shown} (threshold {check.threshold}, {what})")
    return recorded


def run_checks(
    locomo: Path | None = None,
    conversations: int | None = None,
    say: Callable[[str], None] = lambda line: None,
    pairs: Path | None = None,
    liar: tuple[Path, Path] | None = None,
) -> list[Any]:
    """Run every check that can run (synthetic always; gated ones with their data: ``locomo``,
    ``pairs``, ``liar`` as training and measured statements) and record each result under one
    evaluation run, with the checks that could not run and why. Returns the evidence rows."""
    run = EvaluationRun.objects.create(engine_version=engine_version())
    recorded = []
    not_run: dict[str, str] = {}
    by_id: dict[str, tuple[Capability, Check]] = {check.id: (c, check) for c, check in all_checks()}
    for check_id, synthetic in SYNTHETIC.items():
        try:
            value, detail = _sandboxed(synthetic)
        except Exception as exc:  # a check that cannot run has failed: recorded as such
            value, detail = None, {"error": f"{type(exc).__name__}: {exc}"}
        capability, check = by_id[check_id]
        recorded.append(
            record(capability, check, value, dataset="synthetic", detail=detail, run=run)
        )
        shown = value if value is None else round(value, 3)
        say(f"{check_id}: {shown} (threshold {check.threshold})")
    given: dict[str, tuple[dict[str, Any], Callable[[], dict[str, Result]], str]] = {}
    if locomo is not None:
        given["locomo"] = (
            describe(locomo),
            lambda: locomo_checks(locomo, conversations),
            "{conversations} conversations",
        )
    if pairs is not None:
        given["pairs"] = (describe(pairs), lambda: pairs_checks(pairs), "pairs file")
    if liar is not None:
        train, measured = liar
        given["liar"] = (
            {**describe(measured), "train": describe(train)},
            lambda: liar_checks(train, measured),
            "statements file",
        )
    for needs, (data, measure, what) in given.items():
        try:
            results = measure()
        except NotMeasurable as exc:
            results = {c.id: None for _, c in all_checks() if c.needs == needs}
            results = {"_not_run": (None, dict.fromkeys(results, str(exc)))}
        except Exception as exc:  # the checks failed to run: recorded as failed
            results = _failed(exc, needs)
        count = results.pop("_conversations", (0, {}))[0]
        not_run |= results.pop("_not_run", (None, {}))[1]
        more = {"conversations": count} if needs == "locomo" else {}
        recorded += _record_gated(data, results, say, more, what.format(conversations=count), run)
    for _, check in all_checks():
        if check.kind == "gated-eval" and check.needs not in given:
            not_run[check.id] = f"needs {NEEDS[check.needs]}"
    for check_id, why in not_run.items():
        say(f"{check_id}: not run: {why}")
    run.datasets = {needs: data for needs, (data, _, _) in given.items()}
    run.not_run = not_run
    run.finished_at = timezone.now()
    run.save(update_fields=["datasets", "not_run", "finished_at"])
    return recorded
