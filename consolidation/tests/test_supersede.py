"""The supersede phase: a newer memory changing a slot (entity + single-valued attribute) of an
older one supersedes it when the same writer restated it, and is a proposal for a curator
otherwise; accepted or rejected with a reason, once."""

import pytest

from consolidation.models import SupersessionProposal
from consolidation.services import consolidation_execute, consolidation_start, proposal_decide
from meaning_memory.testing import make_member
from memories.errors import ValidationFailed
from memories.models import Memory, ProvenanceEvent
from memories.operations import memory_remember
from memories.selectors.reader import Reader
from memories.services import memory_feedback

ZEPHYR = [{"name": "Zephyr", "type": "organization"}]


def remember(agent, text, **extra):
    return memory_remember(
        agent=agent, text=text, scope="team:accounts", entities=ZEPHYR, **extra
    ).memory


def run(workspace, **options):
    done = consolidation_execute(
        consolidation_start(workspace=workspace, trigger="command", phases=["supersede"], **options)
    )
    assert done.status == "done", done.error
    return done.counts["supersede"]


def test_the_same_writer_restating_a_slot_supersedes_its_older_memory(alice):
    old = remember(alice.agent, "Zephyr renews its support contract in March.")
    remember(alice.agent, "Zephyr's office is in Lisbon.")  # no slot: untouched
    new = remember(alice.agent, "Zephyr renews its support contract in June now.")
    assert run(alice.agent.workspace, dry_run=True) == {
        "memories": 3,
        "applied": 1,
        "proposed": 0,
        "read_after_id": 0,
    }
    assert Memory.objects.get(pk=old.pk).status == "active"
    counts = run(alice.agent.workspace)
    assert (counts["applied"], counts["proposed"]) == (1, 0)
    old.refresh_from_db()
    assert old.status == "superseded" and old.superseded_by_id == new.pk
    assert old.valid_until == new.valid_from or old.valid_until is not None
    event = ProvenanceEvent.objects.get(memory=old, action="supersede")
    assert "consolidation rule" in event.reason and "month of Zephyr: March -> June" in event.reason
    proposal = SupersessionProposal.objects.get()
    assert (proposal.status, proposal.confidence) == ("applied", "high")
    assert run(alice.agent.workspace)["applied"] == 0  # idempotent


def test_another_writer_is_a_proposal_a_curator_decides_once(alice, bob, django_user_model):
    curator = make_member("carol", alice.agent.workspace)
    old = remember(alice.agent, "Zephyr is on the gold plan.")
    new = remember(bob.agent, "Zephyr moved to the silver plan.")
    assert run(alice.agent.workspace)["proposed"] == 1
    proposal = SupersessionProposal.objects.get()
    assert proposal.status == "open" and proposal.attribute == "plan"
    assert (proposal.old_values, proposal.new_values) == (["gold"], ["silver"])
    assert Memory.objects.get(pk=old.pk).status == "active"

    with pytest.raises(ValidationFailed) as caught:
        proposal_decide(proposal=proposal, user=curator, accept=True, reason=" ")
    assert "reason" in caught.value.errors
    proposal_decide(proposal=proposal, user=curator, accept=True, reason="Bob has the contract")
    old.refresh_from_db()
    assert old.status == "superseded" and old.superseded_by_id == new.pk
    event = ProvenanceEvent.objects.get(memory=old, action="supersede")
    assert event.user == curator and "Bob has the contract" in event.reason
    with pytest.raises(ValidationFailed, match="accepted already"):
        proposal_decide(proposal=proposal, user=curator, accept=False, reason="changed my mind")


def test_a_rejected_proposal_changes_nothing_but_itself(alice, bob, django_user_model):
    curator = make_member("carol", alice.agent.workspace)
    old = remember(alice.agent, "Zephyr is on the gold plan.")
    remember(bob.agent, "Zephyr moved to the silver plan.")
    run(alice.agent.workspace)
    proposal = SupersessionProposal.objects.get()
    proposal_decide(proposal=proposal, user=curator, accept=False, reason="Bob means Globex")
    proposal.refresh_from_db()
    assert (proposal.status, proposal.reason, proposal.decided_by) == (
        "rejected",
        "Bob means Globex",
        curator,
    )
    assert Memory.objects.get(pk=old.pk).status == "active"
    assert not ProvenanceEvent.objects.filter(action="supersede").exists()


def test_other_scopes_and_other_entities_are_left_alone(alice):
    remember(alice.agent, "Zephyr renews its support contract in March.")
    memory_remember(
        agent=alice.agent,
        text="Zephyr renews its support contract in June.",
        entities=ZEPHYR,  # alice's private scope
    )
    memory_remember(
        agent=alice.agent,
        text="Globex renews its support contract in June.",
        scope="team:accounts",
        entities=[{"name": "Globex", "type": "organization"}],
    )
    assert run(alice.agent.workspace)["applied"] == 0
    assert not SupersessionProposal.objects.exists()


ATLAS = [{"name": "Atlas Foods", "type": "customer"}]


def test_a_correction_consolidation_applies_leaves_search_and_the_compiled_file(alice):
    """Superseded by consolidation means what it means on remember's ``supersedes``: the old
    window ends where the new memory begins, so a default search and the compiled file leave
    the old fact out, and ``as_of`` before the change still finds it."""
    from datetime import timedelta

    from memories.compile import compiled_memory_file
    from memories.operations import memory_search

    march = memory_remember(
        agent=alice.agent,
        text="Atlas Foods renews its contract in March.",
        entities=ATLAS,
        significance=0.95,
    ).memory
    september = memory_remember(
        agent=alice.agent,
        text="Atlas Foods now renews its contract in September.",
        entities=ATLAS,
    ).memory
    assert run(alice.agent.workspace)["applied"] == 1
    march.refresh_from_db()
    september.refresh_from_db()
    assert march.status == "superseded"
    assert september.valid_from == september.created_at == march.valid_until
    hits = memory_search(
        Reader.of_agent(alice.agent), query="When does Atlas Foods renew its contract?"
    )
    assert [h.memory.pk for h in hits] == [september.pk]
    before = september.created_at - timedelta(microseconds=1)
    then = memory_search(
        Reader.of_agent(alice.agent), query="Atlas Foods contract renewal", as_of=before
    )
    assert [h.memory.pk for h in then] == [march.pk]
    compiled = compiled_memory_file(Reader.of_agent(alice.agent))
    assert "September" in compiled.markdown and "in March" not in compiled.markdown
    events = ProvenanceEvent.objects.filter(memory=march, action="supersede")
    assert [e.reason.split(":")[0] for e in events] == [f"superseded by {september.mem_id}"]


def test_a_proposal_a_curator_accepts_closes_the_window_the_same_way(alice, bob):
    curator = make_member("carol", alice.agent.workspace)
    old = remember(alice.agent, "Zephyr is on the gold plan.")
    new = remember(bob.agent, "Zephyr moved to the silver plan.")
    assert run(alice.agent.workspace)["proposed"] == 1
    old.refresh_from_db()
    assert (old.status, old.valid_until) == ("active", None)  # a proposal changes nothing
    proposal_decide(
        proposal=SupersessionProposal.objects.get(), user=curator, accept=True, reason="Bob knows."
    )
    old.refresh_from_db()
    new.refresh_from_db()
    assert old.status == "superseded" and old.valid_until == new.valid_from == new.created_at


CORRECTIONS = {
    # A changed value stated in ordinary words, no entity given: the recogniser names the bank.
    "helios": (
        "Helios Bank renewal moved to June after their audit.",
        "Helios Bank renewal is now in March.",
        "When is the Helios Bank renewal?",
        {},
    ),
    # An explicit correction of a pinned memory: "in June, not March".
    "zephyr": (
        "Zephyr Logistics renews its support contract every March.",
        "Zephyr Logistics renews its support contract in June, not March (corrected by Priya).",
        "When does Zephyr Logistics renew its support contract?",
        {"pinned": True},
    ),
}


@pytest.mark.parametrize("case", sorted(CORRECTIONS))
def test_corrections_in_ordinary_words_supersede_after_consolidation(alice, case):
    from datetime import timedelta

    from memories.compile import compiled_memory_file
    from memories.operations import memory_search

    before_text, after_text, question, extra = CORRECTIONS[case]
    old = memory_remember(agent=alice.agent, text=before_text, significance=0.9).memory
    if extra.get("pinned"):
        memory_feedback(agent=alice.agent, mem_id=old.mem_id, action="pin", reason="key date")
        old.refresh_from_db()
        assert old.pinned
    new = memory_remember(agent=alice.agent, text=after_text).memory
    # Before consolidation both are valid, and the stale one may rank first.
    assert {h.memory.pk for h in memory_search(Reader.of_agent(alice.agent), query=question)} >= {
        old.pk,
        new.pk,
    }
    counts = run(alice.agent.workspace)
    assert (counts["applied"], counts["proposed"]) == (1, 0)
    old.refresh_from_db()
    new.refresh_from_db()
    assert old.status == "superseded" and old.superseded_by_id == new.pk
    assert old.valid_until == new.valid_from
    hits = memory_search(Reader.of_agent(alice.agent), query=question)
    assert [h.memory.pk for h in hits] == [new.pk]
    then = memory_search(
        Reader.of_agent(alice.agent),
        query=question,
        as_of=new.valid_from - timedelta(microseconds=1),
    )
    assert [h.memory.pk for h in then] == [old.pk]
    compiled = compiled_memory_file(Reader.of_agent(alice.agent)).markdown
    assert after_text in compiled and before_text not in compiled
    event = ProvenanceEvent.objects.get(memory=old, action="supersede")
    assert "consolidation rule" in event.reason and "same writer" in event.reason
    proposal = SupersessionProposal.objects.get()
    assert (proposal.status, proposal.confidence) == ("applied", "high")


def test_a_correction_by_another_writer_is_proposed_and_changes_nothing(alice, bob):
    old = memory_remember(
        agent=alice.agent, text=CORRECTIONS["helios"][0], scope="team:accounts"
    ).memory
    memory_remember(agent=bob.agent, text=CORRECTIONS["helios"][1], scope="team:accounts")
    assert run(alice.agent.workspace)["proposed"] == 1
    proposal = SupersessionProposal.objects.get()
    assert proposal.status == "open" and proposal.attribute == "month"
    assert (proposal.old_values, proposal.new_values) == (["June"], ["March"])
    old.refresh_from_db()
    assert (old.status, old.valid_until) == ("active", None)


@pytest.mark.parametrize(
    "older, newer",
    [
        # Same subject, another thing: nothing to correct.
        ("Helios Bank renewal is in March.", "Helios Bank prefers invoices by email."),
        # The same value again, in other words.
        ("Helios Bank renews in March.", "Helios Bank's renewal falls in March, as every year."),
        # Another figure of another thing.
        ("Helios Bank has 40 seats.", "Helios Bank opened 3 new offices."),
    ],
)
def test_what_is_not_a_correction_is_left_alone(alice, older, newer):
    old = memory_remember(agent=alice.agent, text=older).memory
    memory_remember(agent=alice.agent, text=newer)
    counts = run(alice.agent.workspace)
    assert (counts["applied"], counts["proposed"]) == (0, 0)
    assert Memory.objects.get(pk=old.pk).status == "active"


def test_metadata_that_name_another_customer_keep_a_change_apart(alice):
    """The same words about two customers (their metadata say so) are two facts: neither
    supersedes the other; the same customer's change still does, whoever spoke."""
    kestrel = remember(
        alice.agent, "Zephyr renews its support contract in March.", metadata={"customer": "k"}
    )
    other = remember(
        alice.agent,
        "Zephyr renews its support contract in June now.",
        metadata={"customer": "o", "speaker": "Priya"},
    )
    counts = run(alice.agent.workspace)
    assert (counts["applied"], counts["proposed"]) == (0, 0)
    same = remember(
        alice.agent,
        "Zephyr renews its support contract in September now.",
        metadata={"customer": "o", "speaker": "Dana"},  # who spoke is not what it is about
    )
    counts = run(alice.agent.workspace)
    assert counts["applied"] == 1
    other.refresh_from_db()
    kestrel.refresh_from_db()
    assert other.status == "superseded" and other.superseded_by_id == same.pk
    assert kestrel.status == "active"
