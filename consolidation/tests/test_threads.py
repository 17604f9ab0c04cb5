"""Open Threads: episodic memories of a scope grouped across sessions by their vectors and their
rarer words, incrementally and resumably; the writer's own thread name; cues that keep a thread
open; off by default (asking for the phase names its switch)."""

from datetime import UTC, datetime, timedelta

import pytest

from consolidation import threads as open_threads
from consolidation.models import ConsolidationRun, PhaseWatermark
from consolidation.phases import threads as thread_phase
from consolidation.services import consolidation_execute, consolidation_start
from memories.errors import Forbidden
from memories.models import Memory, Thread, ThreadMember
from memories.operations import memory_remember
from memories.selectors.reader import Reader

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
#: Two stories told over four sessions, between other talk.
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


def write(agent, text, session, minutes, **extra):
    return memory_remember(
        agent=agent,
        text=text,
        memory_type="episodic",
        session=f"session-{session}",
        created_at=START + timedelta(days=7 * session, minutes=minutes),
        **extra,
    ).memory


def story(agent, sessions=range(4)):
    for session in sessions:
        write(agent, POTTERY[session], session, 0)
        write(agent, OTHER[session], session, 1)
        write(agent, ROOF[session], session, 2)


def run(workspace, **options):
    return consolidation_execute(
        consolidation_start(workspace=workspace, trigger="command", phases=["threads"], **options)
    )


def members(thread):
    return [
        m.text
        for m in Memory.objects.filter(thread_member__thread=thread).order_by("created_at", "id")
    ]


@pytest.fixture
def threads_on(settings):
    settings.MM_OPEN_THREADS = True


def test_two_stories_told_across_sessions_become_two_threads(alice, threads_on):
    story(alice.agent)
    done = run(alice.agent.workspace)
    assert done.status == "done", done.error
    grouped = [t for t in Thread.objects.all() if t.size > 1]
    by_story = {}
    for thread in grouped:
        texts = members(thread)
        assert not (set(texts) & set(POTTERY) and set(texts) & set(ROOF)), texts
        by_story["pottery" if set(texts) & set(POTTERY) else "roof"] = (thread, texts)
    pottery, pottery_texts = by_story["pottery"]
    roof, roof_texts = by_story["roof"]
    assert pottery_texts == POTTERY and roof_texts == ROOF
    assert pottery.sessions == 4 and pottery.first_seen < pottery.last_seen
    assert "pottery" in pottery.title.lower() or "studio" in pottery.title.lower()
    # A plan (next week) with nothing after it keeps the pottery thread open; the roof's
    # waiting was answered by a later "fixed … done".
    assert pottery.status == "open" and [c["cue"] for c in pottery.cues] == ["plan"]
    assert roof.status == "resolved" and roof.cues == []
    counts = done.counts["threads"]
    assert (
        counts["memories"] == 12
        and counts["joined"] + counts["started"] == 12 - counts["unthreaded"]
    )
    # Each member says why it joined.
    evidence = ThreadMember.objects.filter(thread=pottery).order_by("memory_id")
    assert [e.evidence["by"] for e in evidence][:2] == ["new", "similarity"]


def test_runs_are_incremental_and_a_later_memory_joins_its_story(alice, threads_on):
    story(alice.agent, sessions=range(3))
    run(alice.agent.workspace)
    before = {t.pk: t.size for t in Thread.objects.all()}
    assert run(alice.agent.workspace).counts["threads"]["memories"] == 0  # nothing new
    late = write(alice.agent, POTTERY[3], 3, 0)
    again = run(alice.agent.workspace)
    assert again.counts["threads"]["memories"] == 1
    thread = ThreadMember.objects.get(memory=late).thread
    assert thread.pk in before and thread.size == before[thread.pk] + 1
    assert thread.status == "open"


def test_the_writers_thread_name_groups_its_memories(alice, threads_on):
    first = write(alice.agent, "Call the bank about the mortgage.", 0, 0, thread="mortgage")
    second = write(alice.agent, "Lunch was a tomato soup with bread.", 1, 0, thread="mortgage")
    third = write(alice.agent, "The bank sent the mortgage papers.", 2, 0)
    run(alice.agent.workspace)
    named = Thread.objects.get(label="mortgage")
    assert set(named.members.values_list("memory_id", flat=True)) == {first.pk, second.pk}
    assert not ThreadMember.objects.filter(memory=third, thread=named).exists()


def test_a_run_stopped_between_batches_goes_on_where_it_stopped(alice, threads_on, monkeypatch):
    story(alice.agent)
    monkeypatch.setattr(thread_phase, "BATCH", 5)
    real = thread_phase._store_threads
    calls = {"n": 0}

    def dies_on_the_second_batch(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] > 1:  # one scope: one call a batch; the second batch dies
            raise RuntimeError("worker killed")
        return real(*args, **kwargs)

    monkeypatch.setattr(thread_phase, "_store_threads", dies_on_the_second_batch)
    failed = run(alice.agent.workspace)
    assert failed.status == "failed" and "worker killed" in failed.error
    kept = ThreadMember.objects.count()
    mark = PhaseWatermark.objects.get(phase="threads").through_id
    assert 0 < kept <= 5 and mark == Memory.objects.order_by("id")[4].pk
    monkeypatch.setattr(thread_phase, "_store_threads", real)
    resumed = run(alice.agent.workspace)
    assert resumed.status == "done" and resumed.counts["threads"]["memories"] == 7
    # Every memory placed once: none lost with the batch that died, none placed twice.
    assert ThreadMember.objects.count() == 12 and resumed.counts["threads"]["unthreaded"] == 0


def test_a_dry_run_reports_threads_and_writes_nothing(alice, threads_on):
    story(alice.agent)
    done = run(alice.agent.workspace, dry_run=True)
    assert done.counts["threads"]["started"] > 0
    assert not Thread.objects.exists() and not ThreadMember.objects.exists()
    assert not PhaseWatermark.objects.filter(phase="threads").exists()


def test_threads_are_off_by_default_and_asking_names_the_switch(alice):
    story(alice.agent, sessions=range(1))
    with pytest.raises(Forbidden) as caught:  # switched off: a 403 over REST
        consolidation_start(workspace=alice.agent.workspace, trigger="api", phases=["threads"])
    assert "MM_OPEN_THREADS" in caught.value.message
    default = consolidation_execute(
        consolidation_start(workspace=alice.agent.workspace, trigger="api")
    )
    assert "threads" not in default.phases and not Thread.objects.exists()
    assert ConsolidationRun.objects.count() == 1


def test_cues_and_their_answers():
    def member(text, days=0, ahead=None):
        return open_threads.Member("m", text, START + timedelta(days=days), ahead)

    now = START + timedelta(days=30)
    assert open_threads.cues([member("We will ship the beta soon.")], now)[0]["cue"] == "plan"
    assert open_threads.cues([member("Are we ready?"), member("Yes, all set.")], now) == []
    assert open_threads.cues([member("Blocked on the vendor."), member("Still nothing.")], now)
    assert (
        open_threads.cues([member("Blocked on the vendor."), member("It is resolved.")], now) == []
    )
    ahead = member("Dentist appointment.", ahead=now + timedelta(days=3))
    assert open_threads.cues([ahead], now)[0]["cue"] == "date ahead"
    assert open_threads.cues([member("We finished the plan we will present.")], now) == []


def test_words_that_are_everywhere_do_not_count():
    vocabulary = open_threads.Vocabulary(100, {"caroline": 60, "pottery": 4, "once": 1}, 0.05)
    assert vocabulary.idf("caroline") == 0 and vocabulary.idf("unseen") == 0
    assert vocabulary.idf("once") > vocabulary.idf("pottery") > 0
    assert set(vocabulary.vector({"caroline": 1, "pottery": 1, "once": 1})) == {"pottery", "once"}
    assert open_threads.title({"pottery": 3, "caroline": 9, "kiln": 2}, vocabulary) == "Pottery"


def compile_for(agent, **options):
    from memories.compile import compile_options, compiled_memory_file

    return compiled_memory_file(
        Reader.of_agent(agent), as_of=START + timedelta(days=60), options=compile_options(**options)
    )


def test_the_compiled_file_lists_open_threads_within_its_budget(alice, bob, threads_on, settings):
    for session in range(4):  # the story in the scope alice and bob share
        for minutes, text in enumerate((POTTERY[session], OTHER[session])):
            write(alice.agent, text, session, minutes, scope="team:accounts")
    # Another story in alice's private scope: bob, who does not see it, never gets its thread.
    for session in range(3):
        write(alice.agent, ROOF[session].replace("roofer", "plumber"), session, 3)
    run(alice.agent.workspace)
    pottery = Thread.objects.get(members__memory__text=POTTERY[0])
    plumber = Thread.objects.get(members__memory__text=ROOF[0].replace("roofer", "plumber"))
    assert pottery.status == plumber.status == "open" and plumber.size == 3

    mine = compile_for(alice.agent, show_ids=True)
    assert mine.markdown == compile_for(alice.agent, show_ids=True).markdown  # deterministic
    section = mine.markdown.split("## Open Threads\n\n")[1].split("\n\n")[0]
    assert f"(thread_id: {pottery.thread_id})" in section and "open: plan (will)" in section
    assert set(mine.threads) == {pottery.thread_id, plumber.thread_id}
    assert mine.markdown.index("## Open Threads") < mine.markdown.index("## Facts")
    assert mine.tokens <= mine.options.budget

    assert compile_for(bob.agent).threads == [pottery.thread_id]

    # A small budget keeps the section within its share; off means no section at all.
    small = compile_for(alice.agent, budget=200)
    assert small.tokens <= 200 and len(small.threads) < 2
    settings.MM_OPEN_THREADS = False
    assert "## Open Threads" not in compile_for(alice.agent).markdown
