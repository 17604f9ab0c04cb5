"""A memory's episode: the memories just before it in its session, indexed with it."""

import importlib
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from memories.models import Memory
from memories.operations import memory_remember, memory_search
from memories.selectors.reader import Reader
from memories.services import memory_forget

START = timezone.now() - timedelta(days=3)


def say(actor, text, minute, session="s1", scope=None):
    return memory_remember(
        agent=actor.agent,
        text=text,
        session=session,
        scope=scope,
        created_at=START + timedelta(minutes=minute),
    ).memory


def test_a_memory_holds_the_texts_just_before_it_in_its_session_and_scope(alice, bob):
    first = say(alice, "One.", 1)
    say(alice, "Two.", 2)
    say(alice, "Elsewhere.", 3, session="s2")
    say(alice, "Shared with the team.", 4, scope="team:accounts")
    say(bob, "Bob's words, in the team scope.", 5, scope="team:accounts")
    forgotten = say(alice, "Forget me.", 6)
    memory_forget(agent=alice.agent, mem_id=forgotten.mem_id, reason="wrong")
    say(alice, "Three.", 7)
    late = say(alice, "Four.", 8)
    backdated = say(alice, "Written last, dated first.", 0)

    assert first.episode_text == "" and first.follows_id is None
    assert first.episode_embedding is None  # its own vector stands for its episode
    assert late.episode_text == "Two.\nThree."  # not other sessions, scopes, forgotten memories
    assert late.follows_id == Memory.objects.get(text="Three.").pk
    assert late.episode_embedding is not None
    assert backdated.episode_text == ""  # only what came before it
    team = Memory.objects.get(text="Bob's words, in the team scope.")
    assert team.episode_text == "Shared with the team."  # any writer, the same scope


def test_no_session_or_a_zero_window_means_no_episode(alice, settings):
    memory_remember(agent=alice.agent, text="One.")
    assert memory_remember(agent=alice.agent, text="Two.").memory.episode_text == ""
    settings.MM_EPISODE_WINDOW = 0
    say(alice, "Three.", 1)
    assert say(alice, "Four.", 2).episode_text == ""


def test_a_reply_is_found_by_the_words_it_replies_to(alice):
    question = say(alice, "Have you ever been to Lisbon?", 1)
    reply = say(alice, "Yes, twice: the tram rides were wonderful.", 2)
    say(alice, "We should book the dentist.", 3, session="s2")
    hits = {
        hit.memory.pk: hit for hit in memory_search(Reader.of_agent(alice.agent), query="Lisbon")
    }
    assert reply.pk in hits  # "Lisbon" is only in its episode
    assert hits[question.pk].keyword_rank > hits[reply.pk].keyword_rank > 0
    assert list(hits)[0] == question.pk  # a memory's own words weigh more


def test_a_memory_next_to_a_relevant_one_in_its_session_gets_a_share_of_its_relevance(
    alice, settings
):
    question = say(alice, "Which city did you like best on the trip?", 1)
    answer = say(alice, "Porto, without a doubt.", 2)
    breakfast = say(alice, "The hotel breakfast was cold.", 3)
    for minute, text in enumerate(["Pay the electricity bill.", "Water the plants."], 10):
        say(alice, text, minute, session="chores")
    hits = {
        h.memory.pk: h for h in memory_search(Reader.of_agent(alice.agent), query="favourite city")
    }
    best_neighbour = max(hits[question.pk].fused, hits[breakfast.pk].fused)
    assert hits[answer.pk].neighbour == pytest.approx(
        settings.MM_SEARCH_NEIGHBOUR_WEIGHT * best_neighbour
    )
    assert hits[question.pk].neighbour == pytest.approx(
        settings.MM_SEARCH_NEIGHBOUR_WEIGHT * hits[answer.pk].fused
    )
    chores = [h for h in hits.values() if h.memory.session == "chores"]
    assert chores and all(
        h.neighbour
        == pytest.approx(
            settings.MM_SEARCH_NEIGHBOUR_WEIGHT
            * max(o.fused for o in chores if o.memory.pk != h.memory.pk)
        )
        for h in chores
    )


def test_the_migration_gives_existing_memories_the_same_episodes(alice):
    backfill = importlib.import_module("memories.migrations.0005_memory_episode_text")
    for minute, text in enumerate(["One.", "Two.", "Three.", "Four."]):
        say(alice, text, minute, session="s1" if minute != 2 else "s2")
    follows = importlib.import_module("memories.migrations.0007_memory_episode_embedding_follows")
    rows = Memory.objects.values_list("pk", "episode_text", "follows_id")
    expected = {pk: (text, follows_id) for pk, text, follows_id in rows}
    Memory.objects.update(episode_text="", follows=None)
    with connection.cursor() as cursor:
        cursor.execute(backfill.EPISODE_BACKFILL)
        cursor.execute(follows.FOLLOWS_BACKFILL)
    assert {pk: (text, follows_id) for pk, text, follows_id in rows.all()} == expected
    assert sorted(text for text, _ in expected.values()) == ["", "", "One.", "One.\nTwo."]
