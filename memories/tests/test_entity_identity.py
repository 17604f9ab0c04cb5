"""Entities worth linking: one entity per workspace and normalised name whatever the recogniser
guessed; the surest source's type (a curator, the team, a writer, a speaker, then the type most
of the model's mentions agree on); a conversation line's speaker a person, its prefix no span;
acronyms, units, currencies and times no organisations or places unless declared; spans
cleaned."""

import pytest

from consolidation.services import consolidation_execute, consolidation_start
from meaning_memory.testing import make_member
from memories.errors import ValidationFailed
from memories.models import Entity, Link
from memories.operations import memory_remember
from memories.services import entity_declare, entity_merge, entity_retype, entity_unmerge
from memories.services.relations.typing import retype_by_mentions


def remember(actor, text, **fields):
    return memory_remember(agent=actor.agent, text=text, **fields).memory


def named(memory):
    """(name, type, how) of each entity a memory mentions."""
    return sorted(
        (link.target_entity.name, link.target_entity.kind, link.evidence.get("rule", link.origin))
        for link in Link.objects.filter(source=memory, target_entity__isnull=False).select_related(
            "target_entity"
        )
    )


def test_a_declared_type_and_the_extracted_name_are_one_entity(alice):
    # The model finds the bank first and guesses a type; the writer then says what it is.
    first = remember(alice, "Helios Bank asked for a new invoice address.")
    guessed = Entity.objects.get(normalized="helios bank")
    assert (guessed.kind, guessed.typed_by) == ("organization", "extraction")
    second = remember(
        alice,
        "Helios Bank renewal moved to June after their audit.",
        entities=[{"name": "Helios Bank", "type": "customer"}],
    )
    assert list(Entity.objects.filter(normalized="helios bank").values_list("pk", "kind")) == [
        (guessed.pk, "customer")
    ]
    assert Entity.objects.get(pk=guessed.pk).typed_by == "writer"
    # One mention each, of the one entity: never "Helios Bank" twice on a memory.
    assert [n for n, _, _ in named(second)].count("Helios Bank") == 1
    assert named(first) == [("Helios Bank", "customer", "extraction")]
    # The model's later guess changes nothing: the writer's type is surer.
    remember(alice, "Helios Bank called again.")
    assert retype_by_mentions(alice.agent.workspace_id) == 0
    assert Entity.objects.get(pk=guessed.pk).kind == "customer"


def test_the_recogniser_s_type_follows_most_of_its_mentions(alice):
    memories = [
        remember(alice, text)
        for text in (
            "We signed a deal with Orion Retail.",
            "We signed a new deal with Orion Retail.",
            "We renewed a deal with Orion Retail.",
        )
    ]
    orion = Entity.objects.get(normalized="orion retail")
    assert orion.typed_by == "extraction"
    # Say the model had read it as a person twice: two of three mentions decide.
    links = Link.objects.filter(target_entity=orion, source__in=memories).order_by("source_id")
    for link in links[:2]:
        link.evidence["label"] = "PERSON"
        link.save(update_fields=["evidence"])
    assert retype_by_mentions(alice.agent.workspace_id) == 1
    assert Entity.objects.get(pk=orion.pk).kind == "person"
    # A curator's correction stands, whatever the mentions say later.
    curator = make_member("carol", alice.agent.workspace)
    entity_retype(user=curator, entity=orion, kind="customer", reason="they buy from us")
    assert retype_by_mentions(alice.agent.workspace_id) == 0
    remember(
        alice,
        "Orion Retail asked for a discount.",
        entities=[{"name": "Orion Retail", "type": "organization"}],
    )
    orion.refresh_from_db()
    assert (orion.kind, orion.typed_by) == ("customer", "curator")


def test_consolidation_counts_the_types_again(alice):
    written = remember(alice, "We signed a deal with Orion Retail.")
    orion = Entity.objects.get(normalized="orion retail")
    link = Link.objects.get(source=written, target_entity=orion)
    link.evidence["label"] = "GPE"
    link.save(update_fields=["evidence"])
    run = consolidation_execute(
        consolidation_start(workspace=alice.agent.workspace, trigger="command", phases=["link"])
    )
    assert run.status == "done" and run.counts["link"]["retyped"] == 1
    assert Entity.objects.get(pk=orion.pk).kind == "place"


def test_a_conversation_line_s_speaker_is_a_person_once_and_no_span(alice):
    # The model had taken Maria for an organisation before she spoke.
    Entity.objects.create(
        workspace=alice.agent.workspace,
        kind="organization",
        name="Maria",
        normalized="maria",
        keys=["maria"],
        origin="extraction",
    )
    lines = [
        remember(alice, "Maria: Yep, I went to Berlin last week."),
        remember(alice, "Maria: The Lisbon office opens at 09:00."),
        remember(alice, "Tom: Did Maria like Berlin?"),
    ]
    maria = Entity.objects.get(normalized="maria")
    assert (maria.kind, maria.typed_by) == ("person", "speaker")
    assert Entity.objects.filter(normalized__startswith="maria").count() == 1
    assert not Entity.objects.filter(name__contains=":").exists()
    assert not Entity.objects.filter(normalized__in=["yep", "maria yep"]).exists()
    first = named(lines[0])
    assert ("Maria", "person", "speaker") in first and ("Berlin", "place", "extraction") in first
    # The third line's speaker is Tom; Maria is named in its words, the same entity.
    third = named(lines[2])
    assert ("Tom", "person", "speaker") in third
    assert Link.objects.filter(source=lines[2], target_entity=maria).exists()
    # Where the speaker was, the link says so.
    link = Link.objects.get(source=lines[1], target_entity=maria)
    assert link.evidence["rule"] == "speaker" and link.evidence["span"] == [0, 5]


@pytest.mark.parametrize(
    "text",
    [
        "The API returns CSV files and SSO goes through MCP.",
        "The invoice is 40 EUR, due at 09:00 Berlin time.",
        "Upload up to 5 GB per file over HTTPS.",
    ],
)
def test_acronyms_units_currencies_and_times_are_not_organisations_or_places(alice, text):
    from memories.relational.extraction import extract

    # The model itself does call some of them organisations or places: the rule has work here.
    [spans] = extract([text])
    assert any(
        s.entity_type in ("organization", "place")
        and (s.text.isupper() or any(c.isdigit() for c in s.text))
        for s in spans
    ), spans
    memory = remember(alice, text)
    for name, kind, _ in named(memory):
        assert not (name.isupper() and kind in ("organization", "place")), (name, kind)
        assert not any(ch.isdigit() for ch in name), name


def test_a_declared_acronym_is_found(alice):
    entity_declare(
        workspace_id=alice.agent.workspace_id, name="MCP", kind="product", agent=alice.agent
    )
    memory = remember(alice, "The agent talks to us over MCP.")
    assert ("MCP", "product", "gazetteer") in named(memory)


def test_spans_are_cleaned(alice):
    memory = remember(alice, "We met the Helios Bank team; 09:00 Berlin suits them.")
    names = [n for n, _, _ in named(memory)]
    assert "Helios Bank" in names and "Berlin" in names
    assert not any(n.startswith(("the ", "09")) for n in names)


def test_unicode_and_spacing_make_one_entity(alice):
    remember(alice, "Zoë Ödegaard joined.", entities=[{"name": "Zoë  Ödegaard", "type": "person"}])
    remember(alice, "ZOË ÖDEGAARD left.", entities=[{"name": "zoë ödegaard ", "type": "person"}])
    assert Entity.objects.filter(normalized="zoë ödegaard").count() == 1


def test_a_merge_parts_again_and_so_do_namesakes_of_another_type(alice):
    curator = make_member("carol", alice.agent.workspace)
    remember(alice, "ZL sent a note.", entities=[{"name": "ZL", "type": "customer"}])
    remember(
        alice,
        "Zephyr Logistics sent a note.",
        entities=[{"name": "Zephyr Logistics", "type": "customer"}],
    )
    short, full = (Entity.objects.get(normalized=n) for n in ("zl", "zephyr logistics"))
    entity_merge(user=curator, entity=short, into=full, reason="same company")
    entity_unmerge(user=curator, entity=Entity.objects.get(pk=short.pk), reason="two companies")
    assert Entity.objects.get(pk=short.pk).merged_into_id is None
    # A namesake of another type merged into it (as the upgrade to one entity per name did)
    # stands apart again: an entity is its name and its type.
    other = Entity.objects.create(
        workspace=alice.agent.workspace,
        kind="product",
        name="ZL",
        normalized="zl",
        keys=["zl"],
        origin="extraction",
        merged_into=short,
    )
    entity_unmerge(user=curator, entity=other, reason="ZL the product is not ZL the company")
    assert set(
        Entity.objects.filter(normalized="zl", merged_into__isnull=True).values_list("kind")
    ) == {("customer",), ("product",)}
    # A twin of the same name and type stays one with it.
    twin = Entity.objects.create(
        workspace=alice.agent.workspace,
        kind="customer",
        name="ZL",
        normalized="zl",
        keys=["zl"],
        origin="extraction",
        merged_into=short,
    )
    with pytest.raises(ValidationFailed, match="one entity per name and kind of thing"):
        entity_unmerge(user=curator, entity=twin, reason="they differ")
    # Nor can a curator give one namesake the other's type: they would be one name and type.
    with pytest.raises(ValidationFailed, match="kind of thing of its namesake"):
        entity_retype(user=curator, entity=other, kind="customer", reason="a slip")
