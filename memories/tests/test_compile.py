import re
from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from memories.compile import (
    CUT_PROTECTED_REASON,
    CUT_REASON,
    SECTIONS,
    TOO_LONG_REASON,
    compile_options,
    compiled_memory_file,
)
from memories.errors import ValidationFailed
from memories.models import Memory
from memories.operations import memory_remember, memory_search
from memories.selectors.reader import Reader
from memories.services import memory_feedback, memory_forget
from memories.temporal import decay
from memories.tokens import count_tokens

RENEWAL = (
    "Zephyr Logistics renews its support contract every March; the renewal decides "
    "next year's budget."
)
#: About 30 tokens, so that a budget of a few hundred holds a handful of them.
FILLER = (
    "Entry {n}: the quarterly report for the northern warehouse lists pallets, forklifts, "
    "shift rotas and the cold-storage inventory in detail."
)


def compile_for(actor, **options):
    return compiled_memory_file(Reader.of_agent(actor.agent), options=compile_options(**options))


def lines_of(compiled):
    return [line for line in compiled.markdown.splitlines() if line.startswith("- ")]


def remember_fillers(actor, significances, **extra):
    return [
        memory_remember(agent=actor.agent, text=FILLER.format(n=n), significance=s, **extra).memory
        for n, s in enumerate(significances)
    ]


def test_zephyr_renders_with_stare_marks(alice):
    memory_remember(agent=alice.agent, text=RENEWAL, stare_scores={"s": 0.9, "t": 0.4})

    assert f"- ●○——— {RENEWAL}" in lines_of(compile_for(alice))


def test_verbose_and_off_modes(alice):
    memory = memory_remember(
        agent=alice.agent, text=RENEWAL, stare_scores={"s": 0.9, "t": 0.4}
    ).memory

    # A is the engine's (memories.asymmetry.score): with no record of its source or topics,
    # none, as the seed prints it.
    assert memory.a_score is None
    assert lines_of(compile_for(alice, display_mode="verbose")) == [
        f"- [S0.90 T0.40 A– R– E–] {RENEWAL}"
    ]
    assert lines_of(compile_for(alice, display_mode="off")) == [f"- {RENEWAL}"]


def test_show_ids_puts_the_mem_id_on_each_line(alice):
    memory = memory_remember(agent=alice.agent, text=RENEWAL).memory

    assert lines_of(compile_for(alice, show_ids=True)) == [
        f"- ————— {RENEWAL} (mem_id: {memory.mem_id})"
    ]


def test_header_and_sections_in_documented_order(alice):
    for category in reversed(Memory.Category.values):
        memory_remember(agent=alice.agent, text=f"A {category} to keep.", category=category)

    compiled = compile_for(alice)

    headings = [line[3:] for line in compiled.markdown.splitlines() if line.startswith("## ")]
    assert headings == [name for _, name in SECTIONS]
    assert {category for category, _ in SECTIONS} == set(Memory.Category.values)
    assert compiled.markdown.startswith("# Memory: acme (agent alice)\n")
    assert "7 memories in, 0 cut to fit 4000 tokens (cl100k_base)." in compiled.markdown


def test_text_is_put_on_one_line(alice):
    memory_remember(agent=alice.agent, text="First line\n\n  second   line")

    assert lines_of(compile_for(alice)) == ["- ————— First line second line"]


def test_the_file_fits_its_budget_and_less_significant_go_first(alice):
    remember_fillers(alice, [0.1, 0.5, 0.3, 0.7, 0.2, 0.6, 0.4, 0.8])

    compiled = compile_for(alice, budget=200)

    assert compiled.tokens == count_tokens(compiled.markdown) <= 200
    kept = [entry.significance for entry in compiled.included]
    dropped = [entry.significance for entry in compiled.cut]
    assert kept and dropped
    assert min(kept) > max(dropped)
    assert kept == sorted(kept, reverse=True)
    assert {entry.reason for entry in compiled.cut} == {CUT_REASON}
    assert compiled.cut_count == 8 - len(kept)


def test_protected_memories_survive_a_budget_that_cuts_unprotected_ones(alice):
    remember_fillers(alice, [0.85] * 6)
    protected = remember_fillers(alice, [0.95])[0]

    compiled = compile_for(alice, budget=200)

    assert compiled.included[0].mem_id == protected.mem_id
    assert compiled.included[0].protected
    assert compiled.cut_count > 0 and compiled.cut_protected == 0


def test_a_pinned_low_significance_memory_survives(alice):
    remember_fillers(alice, [0.85] * 6)
    low = remember_fillers(alice, [0.05])[0]
    memory_feedback(agent=alice.agent, mem_id=low.mem_id, action="pin", reason="keep it")

    compiled = compile_for(alice, budget=200)

    assert low.mem_id in {entry.mem_id for entry in compiled.included}
    assert all(entry.mem_id != low.mem_id for entry in compiled.cut)


def test_protected_go_least_significant_first_only_when_they_alone_overflow(alice):
    protected = remember_fillers(alice, [0.91, 0.99, 0.93, 0.97, 0.95, 0.92, 0.98, 0.96])
    remember_fillers(alice, [0.8])

    compiled = compile_for(alice, budget=200)

    kept = [entry.significance for entry in compiled.included]
    assert 0 < len(kept) < len(protected)
    assert kept == sorted(kept, reverse=True)
    assert min(kept) > max(e.significance for e in compiled.cut if e.protected)
    assert compiled.cut_protected == len(protected) - len(kept)
    reasons = [entry.reason for entry in compiled.cut]
    assert reasons == [CUT_PROTECTED_REASON] * compiled.cut_protected + [CUT_REASON]


def test_expired_superseded_and_forgotten_memories_never_appear(alice):
    now = timezone.now()
    memory_remember(
        agent=alice.agent,
        text="The old office is on Elm Street.",
        valid_from=now - timedelta(days=30),
        valid_until=now - timedelta(days=1),
    )
    old = memory_remember(agent=alice.agent, text="The support line closes at 17:00.").memory
    memory_remember(
        agent=alice.agent, text="The support line closes at 18:00.", supersedes=old.mem_id
    )
    gone = memory_remember(agent=alice.agent, text="Dana likes green tea.").memory
    memory_forget(agent=alice.agent, mem_id=gone.mem_id, reason="wrong person")
    memory_remember(
        agent=alice.agent,
        text="The new office opens next year.",
        valid_from=now + timedelta(days=90),
    )

    compiled = compile_for(alice)

    assert lines_of(compiled) == ["- ————— The support line closes at 18:00."]


def test_as_of_compiles_the_file_of_that_moment(alice):
    now = timezone.now()
    memory_remember(
        agent=alice.agent,
        text="The old office is on Elm Street.",
        created_at=now - timedelta(days=60),
        valid_from=now - timedelta(days=60),
        valid_until=now - timedelta(days=10),
    )
    memory_remember(agent=alice.agent, text="The new office is on Oak Street.")

    then = compiled_memory_file(Reader.of_agent(alice.agent), as_of=now - timedelta(days=20))

    assert lines_of(then) == ["- ————— The old office is on Elm Street."]


def test_only_the_agents_scopes_and_the_whole_workspace_for_an_operator(alice, bob, charlie):
    memory_remember(agent=alice.agent, text="Alice's private note.")
    memory_remember(agent=bob.agent, text="Bob's private note.")
    memory_remember(agent=bob.agent, text="A team note.", scope="team:accounts")
    memory_remember(agent=charlie.agent, text="Globex's note.")

    assert sorted(lines_of(compile_for(alice))) == [
        "- ————— A team note.",
        "- ————— Alice's private note.",
    ]
    whole = compiled_memory_file(Reader.of_engine(alice.agent.workspace))
    assert len(lines_of(whole)) == 3
    assert whole.markdown.startswith("# Memory: acme\n")


def test_decay_changes_order_and_cuts_but_not_stored_significance(alice):
    now = timezone.now()
    old = memory_remember(
        agent=alice.agent,
        text=FILLER.format(n="old"),
        significance=0.8,
        created_at=now - timedelta(days=60),
    ).memory
    fresh = remember_fillers(alice, [0.6, 0.6, 0.6, 0.6, 0.6, 0.6])

    without = compile_for(alice, budget=200)
    with_decay = compile_for(alice, budget=200, decay="fast")

    assert without.included[0].mem_id == old.mem_id
    assert old.mem_id in {entry.mem_id for entry in with_decay.cut}
    assert with_decay.included[0].mem_id in {m.mem_id for m in fresh}
    weight = next(e.weight for e in with_decay.cut if e.mem_id == old.mem_id)
    assert weight == pytest.approx(0.8 * 0.5 ** (60 / 14), rel=1e-3)
    old.refresh_from_db()
    assert old.significance == 0.8
    assert "Decay: fast." in with_decay.markdown


def test_decay_per_category_override(alice, settings):
    settings.MM_DECAY_PRESET = "never"
    settings.MM_DECAY_CATEGORIES = "event:fast"
    now = timezone.now()
    event = memory_remember(
        agent=alice.agent,
        text="The team met the auditors.",
        category="event",
        significance=0.9,
        created_at=now - timedelta(days=28),
    ).memory
    fact = memory_remember(
        agent=alice.agent,
        text="The auditors are from Baker & Co.",
        significance=0.9,
        created_at=now - timedelta(days=28),
    ).memory

    weights = {e.mem_id: e.weight for e in compile_for(alice).included}

    assert weights[event.mem_id] == pytest.approx(0.9 * 0.25, rel=1e-3)
    assert weights[fact.mem_id] == pytest.approx(0.9)


def test_pinned_memories_do_not_decay(alice):
    old = memory_remember(
        agent=alice.agent,
        text="Never call the client before 9:00.",
        significance=0.5,
        created_at=timezone.now() - timedelta(days=365),
    ).memory
    memory_feedback(agent=alice.agent, mem_id=old.mem_id, action="pin", reason="a rule")

    [entry] = compile_for(alice, decay="fast").included

    assert entry.weight == pytest.approx(0.5) and entry.protected


def test_two_compiles_are_byte_identical(alice, bob):
    remember_fillers(alice, [0.4, 0.8, 0.8, 0.6, 0.9, 0.2, 0.8], scope="team:accounts")
    memory_remember(agent=bob.agent, text=RENEWAL, stare_scores={"s": 0.9}, scope="team:accounts")
    as_of = timezone.now()

    def compiled():
        return compiled_memory_file(
            Reader.of_agent(alice.agent),
            as_of=as_of,
            options=compile_options(budget=300, show_ids=True),
        ).markdown.encode()

    first = compiled()
    assert first == compiled()
    assert b"cut to fit 300 tokens" in first


def test_ties_are_broken_by_the_newer_memory(alice):
    now = timezone.now()
    for days in (3, 1, 2):
        memory_remember(
            agent=alice.agent,
            text=f"Written {days} days ago.",
            created_at=now - timedelta(days=days),
        )

    assert lines_of(compile_for(alice)) == [
        "- ————— Written 1 days ago.",
        "- ————— Written 2 days ago.",
        "- ————— Written 3 days ago.",
    ]


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"budget": 0}, "budget"),
        ({"budget": -5}, "budget"),
        ({"budget": 10**9}, "budget"),
        ({"display_mode": "emoji"}, "display_mode"),
        ({"decay": "sometimes"}, "decay"),
    ],
)
def test_bad_options_name_the_field(options, field):
    with pytest.raises(ValidationFailed) as caught:
        compile_options(**options)
    assert list(caught.value.errors) == [field]


def test_decay_overrides_are_checked():
    categories = tuple(Memory.Category.values)
    assert decay.parse_overrides("event:fast, fact:slow", categories) == (
        ("event", "fast"),
        ("fact", "slow"),
    )
    for text, message in [
        ("event", "is not category:preset"),
        ("gossip:fast", "is not a category"),
        ("event:sometimes", "is not a decay preset"),
        ("event:fast,event:slow", "given twice"),
    ]:
        with pytest.raises(ValueError, match=message):
            decay.parse_overrides(text, categories)


def test_the_decay_table_matches_the_formula():
    table = re.findall(
        r"^(\w+)\s+(?:\d+ days|none)\s+([\d.]+) / ([\d.]+) / ([\d.]+)", decay.__doc__, re.M
    )
    assert {name for name, *_ in table} == set(decay.PRESETS)
    for name, *figures in table:
        policy = decay.DecayPolicy(preset=name)
        for days, shown in zip((30, 90, 365), figures, strict=True):
            assert float(shown) == round(0.5 ** (days / policy.half_life_days("fact")), 2)


def test_bad_decay_categories_fail_the_system_check(settings):
    from memories.checks import check_decay

    settings.MM_DECAY_CATEGORIES = "gossip:fast"

    [error] = check_decay(None)

    assert error.id == "memories.E004"
    assert "MM_DECAY_CATEGORIES: 'gossip' is not a category" in error.msg


def test_the_documented_example_is_what_the_compiler_writes(db):
    from pathlib import Path

    from meaning_memory.testing import make_actor

    readme = (Path(__file__).resolve().parents[2] / "docs" / "search.md").read_text()
    example = readme.split("```\n# Memory: acme (agent assistant)\n", 1)[1].split("```", 1)[0]
    assistant = make_actor("acme", "assistant")
    as_of = datetime(2026, 11, 29, 20, tzinfo=UTC)
    memory_remember(
        agent=assistant.agent,
        text=RENEWAL,
        category="commitment",
        stare_scores={"s": 0.9, "t": 0.4},
        created_at=as_of - timedelta(days=1),
    )

    compiled = compiled_memory_file(Reader.of_agent(assistant.agent), as_of=as_of)

    assert compiled.markdown == "# Memory: acme (agent assistant)\n" + example


def test_a_memory_too_long_for_any_file_of_the_budget_does_not_block_the_rest(alice, settings):
    settings.MM_COMPILE_BUDGET_TOKENS = 300
    long_text = " ".join(f"clause{n} of the master services agreement" for n in range(120))
    huge = memory_remember(agent=alice.agent, text=long_text, significance=0.99).memory
    small = remember_fillers(alice, [0.5, 0.4])

    compiled = compile_for(alice)

    assert [e.mem_id for e in compiled.included] == [m.mem_id for m in small]
    [cut] = compiled.cut
    assert cut.mem_id == huge.mem_id and cut.reason == TOO_LONG_REASON and cut.protected
    assert compiled.cut_protected == 1
    eligible = {
        hit.memory.mem_id: hit.eligible
        for hit in memory_search(
            Reader.of_agent(alice.agent), query="master services agreement warehouse"
        )
    }
    assert eligible[huge.mem_id] == "cut"


def test_decay_never_takes_protection_away(alice):
    now = timezone.now()
    important = memory_remember(
        agent=alice.agent,
        text=FILLER.format(n="important"),
        significance=0.95,
        created_at=now - timedelta(days=60),
    ).memory
    remember_fillers(alice, [0.6] * 6)

    compiled = compile_for(alice, budget=200, decay="fast")

    first = compiled.included[0]
    assert first.mem_id == important.mem_id and first.protected
    assert first.weight < 0.6  # decayed below every fresh memory, yet first
    assert compiled.cut_count > 0 and compiled.cut_protected == 0


def test_equal_memories_are_ordered_by_their_row(alice):
    written = timezone.now() - timedelta(days=1)
    memories = [
        memory_remember(agent=alice.agent, text=f"Same weight {n}.", created_at=written).memory
        for n in range(4)
    ]

    as_of = timezone.now()  # both compiles at one instant: the header shows it to the second
    compiled = compiled_memory_file(Reader.of_agent(alice.agent), as_of=as_of)
    again = compiled_memory_file(Reader.of_agent(alice.agent), as_of=as_of)

    assert [e.mem_id for e in compiled.included] == [m.mem_id for m in memories]
    assert compiled.markdown == again.markdown


def test_header_dates_are_iso_8601_for_any_year(alice):
    compiled = compiled_memory_file(
        Reader.of_agent(alice.agent), as_of=datetime(1, 1, 1, tzinfo=UTC)
    )
    assert "As of 0001-01-01T00:00:00Z: 0 memories in, 0 cut" in compiled.markdown
