"""A write inserts its memory with what is known before its relations are stored: each later
UPDATE of the new row that is not HOT leaves a dead version in every index of the table, the
vector indexes too, until a vacuum, and search reads through them (``benchmarks/load.py``
prints the run's updates and dead versions)."""

from django.db import connection

from memories.models import Link, Memory
from memories.operations import memory_remember, memory_remember_bulk
from memories.services.relations import RELATIONS_VERSION

TEXTS = [
    "Caroline told Melanie that the Paris office moves to Lyon next spring.",
    "Zephyr Logistics renews its support contract with Acme every March.",
    "Melanie painted a sunrise over the lake last Tuesday.",
]


def memory_rows_written() -> tuple[int, int]:
    """Rows of the memories table inserted and updated so far in this transaction (the
    test's, which fixtures and earlier statements may have written in too: compare two)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT n_tup_ins, n_tup_upd FROM pg_stat_xact_user_tables "
            "WHERE relname = 'memories_memory'"
        )
        row = cursor.fetchone()
    return (row[0], row[1]) if row else (0, 0)


def test_a_remember_inserts_its_memory_already_marked_extracted(alice):
    before = memory_rows_written()
    memory = memory_remember(agent=alice.agent, text=TEXTS[0]).memory

    inserted, updated = (a - b for a, b in zip(memory_rows_written(), before, strict=True))
    assert inserted == 1
    # Its extraction's version came with the insert; the A score, which reads the mentions
    # stored after it, is the one update left, and with no record to score from, none.
    assert updated == 0
    stored = Memory.objects.get(pk=memory.pk)
    assert stored.relations_version == RELATIONS_VERSION
    assert stored.a_origin == "" and stored.a_score is None
    assert Link.objects.filter(source=stored, kind="mentions").exists()


def test_a_bulk_write_updates_each_new_row_once_at_most(alice):
    before = memory_rows_written()
    results = memory_remember_bulk(agent=alice.agent, items=[{"text": t} for t in TEXTS])

    inserted, updated = (a - b for a, b in zip(memory_rows_written(), before, strict=True))
    assert inserted == len(TEXTS)
    assert updated <= len(TEXTS)
    for result in results:
        stored = Memory.objects.get(pk=result.memory.pk)
        assert stored.relations_version == RELATIONS_VERSION
        assert stored.a_score is None  # no record: nothing to score from


def test_a_write_enriched_later_is_not_updated_by_its_enrichment(alice, settings):
    """Under ``serve`` (``MM_ENRICH_LATER``) the row is inserted before its names are read;
    the enricher stores its links and, with no claimant and no record to score from, leaves
    the row as it was inserted."""
    from memories.services.enricher import enrich_pending

    settings.MM_ENRICH_LATER = True
    before = memory_rows_written()
    memory = memory_remember(agent=alice.agent, text=TEXTS[1]).memory
    assert enrich_pending().enriched == 1

    inserted, updated = (a - b for a, b in zip(memory_rows_written(), before, strict=True))
    assert (inserted, updated) == (1, 0)
    stored = Memory.objects.get(pk=memory.pk)
    assert stored.relations_version == RELATIONS_VERSION
    assert Link.objects.filter(source=stored, kind="mentions").exists()
