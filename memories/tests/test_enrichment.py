"""A write acknowledged before it is understood (``MM_ENRICH_LATER``;
``memories.services.enrichment``): it is durable and searchable at once, its writer reads it
back at once (search, list, compile, its detail saying ``pending``), and the enrichment stores
exactly what a write enriched in its own transaction stores. One that fails is tried again,
then left ``failed`` for a curator, and keeps no other memory from its enrichment; a memory
erased before its enrichment leaves nothing behind. The crash tests (real processes, kill -9)
are in ``meaning_memory/tests/test_enrichment_crash.py``."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from meaning_memory.testing import make_actor, make_member, searched
from memories.models import Entity, Link, Memory, MemoryEnrichment
from memories.operations import memory_remember, memory_remember_bulk
from memories.services import enrichment
from memories.services.enricher import enrich_pending, enrich_workspace, retry_failed

TEXTS = [
    "Maria Lopez said that Orion Health moves its billing to Lisbon in March.",
    "Melanie from Zephyr Logistics asked whether Postgres 18 is supported in Boston.",
    "Tomás Ñúñez: the Kraków office opens on Monday, ask Ana about the keys.",
]


@pytest.fixture
def later(settings):
    settings.MM_ENRICH_LATER = True
    return settings


def relations_of(memory: Memory) -> set[tuple]:
    """A memory's links as they read, without ids or times."""
    found = set()
    for link in Link.objects.filter(source=memory).select_related("target_entity", "target_memory"):
        end = (
            (link.target_entity.name, link.target_entity.kind)
            if link.target_entity_id
            else ("memory", link.target_memory.text)
        )
        evidence = {k: v for k, v in link.evidence.items() if k != "matched"}
        found.add((end, link.kind, link.origin, repr(sorted(evidence.items())), link.agent_id))
    return found


def understood(memory: Memory) -> dict:
    memory.refresh_from_db()
    return {
        "relations": relations_of(memory),
        "claimant": memory.attributed_to.name if memory.attributed_to_id else None,
        "a": (memory.a_score, memory.a_origin),
        "version": memory.relations_version,
    }


def write_all(actor) -> list[Memory]:
    target = memory_remember(agent=actor.agent, text="The keys are with the front desk.").memory
    written = [
        memory_remember(
            agent=actor.agent,
            text=TEXTS[0],
            entities=[{"name": "Orion Health", "type": "customer"}],
            links=[{"to": target.mem_id, "type": "supports"}],
        ).memory,
        memory_remember(agent=actor.agent, text=TEXTS[1], attributed_to="Melanie Brandt").memory,
    ]
    written += [
        r.memory for r in memory_remember_bulk(agent=actor.agent, items=[{"text": TEXTS[2]}])
    ]
    return written


def test_enriched_later_stores_what_a_write_enriched_at_once_stores(db, settings):
    settings.MM_ENRICH_LATER = False
    now = make_actor("now-co", "writer")
    at_once = [understood(m) for m in write_all(now)]
    assert not MemoryEnrichment.objects.exists()

    settings.MM_ENRICH_LATER = True
    later = make_actor("later-co", "writer")
    written = write_all(later)
    pending = MemoryEnrichment.objects.filter(workspace_id=later.agent.workspace_id)
    assert pending.count() == len(written) + 1  # the link's target too
    assert not Link.objects.filter(source__in=written).exists()
    done = enrich_pending()
    assert (done.enriched, done.failed) == (len(written) + 1, 0)
    assert not pending.exists()

    def same_agent(found, actor):
        return [
            {**f, "relations": {r[:4] + (r[4] == actor.agent.pk,) for r in f["relations"]}}
            for f in found
        ]

    enriched = [understood(m) for m in written]
    assert same_agent(enriched, later) == same_agent(at_once, now)
    first = enriched[0]
    assert (("Orion Health", "customer"), "mentions", "writer") in {
        r[:3] for r in first["relations"]
    }
    assert ("memory", "The keys are with the front desk.") in {r[0] for r in first["relations"]}
    assert enriched[1]["claimant"] == "Melanie Brandt"
    assert enriched[0]["claimant"] == "Maria Lopez"  # the cue's, read later
    assert enriched[2]["version"] == 1


def test_the_writer_reads_its_write_at_once_and_its_entities_when_they_are_made(later, alice):
    client = alice.client
    written = client.post(
        "/api/v1/memories",
        {"text": TEXTS[0], "entities": [{"name": "Orion Health", "type": "customer"}]},
        format="json",
    )
    assert written.status_code == 201, written.json()
    answer = written.json()
    assert answer["enrichment"] == "pending"
    assert answer["entities"] == []
    mem_id = answer["mem_id"]
    # Searchable, listed and compiled before its enrichment.
    assert mem_id in [h["mem_id"] for h in searched(alice, query="Orion Health billing Lisbon")]
    listed = client.get("/api/v1/memories").json()["results"]
    assert mem_id in [m["mem_id"] for m in listed]
    compiled = client.get("/api/v1/compiled").content.decode()
    assert "Orion Health moves its billing to Lisbon" in compiled
    detail = client.get(f"/api/v1/memories/{mem_id}").json()
    assert (detail["enrichment"], detail["entities"]) == ("pending", [])

    enrich_pending()
    detail = client.get(f"/api/v1/memories/{mem_id}").json()
    assert detail["enrichment"] == "done"
    names = {e["name"] for e in detail["entities"]}
    assert {"Orion Health", "Maria Lopez", "Lisbon"} <= names
    # Found by its entity now, as any enriched memory is.
    hits = searched(alice, query="billing", entity="Orion Health")
    assert mem_id in [h["mem_id"] for h in hits]


def test_a_pending_memory_of_another_workspace_or_scope_is_not_found(later, alice, bob, charlie):
    mem_id = memory_remember(agent=alice.agent, text=TEXTS[1], scope="private").memory.mem_id
    assert bob.client.get(f"/api/v1/memories/{mem_id}").status_code == 404
    assert charlie.client.get(f"/api/v1/memories/{mem_id}").status_code == 404
    assert alice.client.get(f"/api/v1/memories/{mem_id}").json()["enrichment"] == "pending"


def test_a_failing_enrichment_is_retried_then_left_for_a_curator(later, alice, monkeypatch):
    later.MM_ENRICH_ATTEMPTS = 2
    recognise = enrichment.recognise

    def breaks_on_one(workspace_id, texts):
        if any("POISON" in text for text in texts):
            raise RuntimeError("the recogniser broke")
        return recognise(workspace_id, texts)

    monkeypatch.setattr(enrichment, "recognise", breaks_on_one)
    bad = memory_remember(agent=alice.agent, text="POISON pill from Zephyr Logistics").memory
    good = memory_remember(agent=alice.agent, text=TEXTS[1]).memory

    done = enrich_pending()
    assert (done.enriched, done.failed) == (1, 0)  # the good one, alone
    assert Link.objects.filter(source=good).exists()
    row = MemoryEnrichment.objects.get(memory=bad)
    assert (row.state, row.attempts) == ("pending", 1)
    assert "RuntimeError: the recogniser broke" in row.last_error
    assert row.next_at > timezone.now()  # not before its pause
    assert enrich_pending().enriched == 0

    MemoryEnrichment.objects.filter(memory=bad).update(next_at=timezone.now())
    assert enrich_pending().failed == 1
    row.refresh_from_db()
    assert (row.state, row.attempts) == ("failed", 2)
    detail = alice.client.get(f"/api/v1/memories/{bad.mem_id}").json()
    assert detail["enrichment"] == "failed"
    # Still searchable while it waits for a curator.
    assert bad.mem_id in [h["mem_id"] for h in searched(alice, query="POISON pill")]
    MemoryEnrichment.objects.filter(memory=bad).update(next_at=timezone.now())
    assert enrich_pending().enriched == 0  # given up on: no more tries by itself

    monkeypatch.setattr(enrichment, "recognise", recognise)
    assert retry_failed(workspace_id=alice.agent.workspace_id + 1000) == 0
    assert retry_failed(workspace_id=alice.agent.workspace_id) == 1
    assert enrich_pending().enriched == 1
    names = {
        link.target_entity.name
        for link in Link.objects.filter(source=bad).select_related("target_entity")
    }
    assert "Zephyr Logistics" in names
    assert alice.client.get(f"/api/v1/memories/{bad.mem_id}").json()["enrichment"] == "done"


def test_a_memory_erased_or_unlinked_before_its_enrichment(later, alice):
    target = memory_remember(agent=alice.agent, text="The keys are with the front desk.").memory
    linking = memory_remember(
        agent=alice.agent, text=TEXTS[2], links=[{"to": target.mem_id, "type": "supports"}]
    ).memory
    gone = memory_remember(agent=alice.agent, text=TEXTS[0]).memory
    target_id = target.pk
    target.delete()
    gone.delete()
    assert MemoryEnrichment.objects.filter(workspace_id=alice.agent.workspace_id).count() == 1
    assert enrich_pending().enriched == 1
    assert not Link.objects.filter(target_memory_id=target_id).exists()
    assert Link.objects.filter(source=linking, target_entity__name="Kraków").exists()
    assert not Entity.objects.filter(name="Orion Health").exists()  # nothing of the erased one


def test_a_consolidation_run_enriches_its_workspace_first(later, alice, charlie):
    mine = memory_remember(agent=alice.agent, text=TEXTS[1]).memory
    theirs = memory_remember(agent=charlie.agent, text=TEXTS[0]).memory
    MemoryEnrichment.objects.update(next_at=timezone.now() + timedelta(hours=1))
    assert enrich_workspace(alice.agent.workspace_id) == 1
    assert Link.objects.filter(source=mine).exists()
    assert MemoryEnrichment.objects.filter(memory=theirs).exists()  # another workspace's waits


def test_a_consolidation_run_is_not_kept_waiting_by_writes_that_keep_coming(
    later, alice, monkeypatch
):
    from memories.services import enricher

    memory_remember(agent=alice.agent, text=TEXTS[1])
    drain = enricher.enrich_pending
    calls = []

    def while_writes_come(**kwargs):  # a new memory before every batch
        calls.append(1)
        assert len(calls) < 20, "the run kept waiting for the writes that came after it"
        memory_remember(agent=alice.agent, text=f"{TEXTS[0]} ({len(calls)})")
        return drain(**kwargs)

    monkeypatch.setattr(enricher, "enrich_pending", while_writes_come)
    assert enricher.enrich_workspace(alice.agent.workspace_id) >= 1
    assert len(calls) <= 2


def test_without_enrich_later_nothing_is_left_pending(alice):
    memory = memory_remember(agent=alice.agent, text=TEXTS[1]).memory
    assert not MemoryEnrichment.objects.exists()
    assert Link.objects.filter(source=memory).exists()
    assert alice.client.get(f"/api/v1/memories/{memory.mem_id}").json()["enrichment"] == "done"


def test_a_curator_sees_and_retries_failed_enrichments_in_the_admin(later, alice, client):
    from django.contrib.auth.models import Permission

    memory = memory_remember(agent=alice.agent, text=TEXTS[1]).memory
    MemoryEnrichment.objects.filter(memory=memory).update(
        state="failed", attempts=5, last_error="RuntimeError: boom"
    )
    other = make_actor("globex", "charlie")
    theirs = memory_remember(agent=other.agent, text=TEXTS[0]).memory
    MemoryEnrichment.objects.filter(memory=theirs).update(state="failed", last_error="theirs")
    curator = make_member("cora", alice.agent.workspace, role="curator", is_staff=True)
    curator.user_permissions.set(Permission.objects.filter(content_type__app_label="memories"))
    client.force_login(curator)
    page = client.get("/admin/memories/memoryenrichment/")
    assert page.status_code == 200
    body = page.content.decode()
    assert "RuntimeError: boom" in body and "theirs" not in body
    answer = client.post(
        "/admin/memories/memoryenrichment/",
        {"action": "retry", "_selected_action": [memory.pk, theirs.pk]},
    )
    assert answer.status_code == 302
    assert MemoryEnrichment.objects.get(memory=memory).state == "pending"
    assert MemoryEnrichment.objects.get(memory=theirs).state == "failed"  # not this curator's


def test_the_dashboard_says_a_memorys_entities_are_still_to_come(later, alice, client):
    memory = memory_remember(agent=alice.agent, text=TEXTS[1]).memory
    member = make_member("mia", alice.agent.workspace, role="viewer")
    client.force_login(member)
    path = f"/w/{alice.agent.workspace.slug}/m/{memory.mem_id}"
    page = client.get(path).content.decode()
    assert "still being read" in page and "It mentions no entity." not in page
    MemoryEnrichment.objects.filter(memory=memory).update(state="failed")
    assert "Reading its entities and links failed" in client.get(path).content.decode()
    retry_failed()
    enrich_pending()
    page = client.get(path).content.decode()
    assert "still being read" not in page and "Zephyr Logistics" in page


def test_a_write_answered_pending_still_shows_the_engines_own_links(later, alice):
    first = alice.client.post(
        "/api/v1/memories", {"text": TEXTS[0], "session": "call-1"}, format="json"
    ).json()
    second = alice.client.post(
        "/api/v1/memories", {"text": TEXTS[1], "session": "call-1"}, format="json"
    ).json()
    assert second["enrichment"] == "pending" and second["entities"] == []
    follows = [
        (link["type"], link["direction"], link["memory"]["mem_id"]) for link in second["links"]
    ]
    assert follows == [("follows", "out", first["mem_id"])]
    enrich_pending()
    again = alice.client.get(f"/api/v1/memories/{second['mem_id']}").json()
    assert again["enrichment"] == "done" and again["entities"]
    assert ("follows", "out", first["mem_id"]) in {
        (link["type"], link["direction"], link.get("memory", {}).get("mem_id"))
        for link in again["links"]
    }
