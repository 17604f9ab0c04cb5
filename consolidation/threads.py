"""Open Threads (pilot, ``MM_OPEN_THREADS``): related episodic memories of one scope grouped
across sessions, incrementally, as consolidation reads them.

Which memories: active, embedded, episodic (``memory_type``) or events (``category``). A memory
whose writer named its thread (``Memory.thread``) joins the thread of that name in its scope.
Any other is compared with candidate threads of its scope: the ``MM_THREAD_CANDIDATES``
nearest by centroid (the mean of their members' vectors) that existed before its batch, and the
threads its batch has touched. Its score against a thread::

    (1 - w) * cosine(memory vector, thread centroid) + w * cosine(memory words, thread words)

with ``w = MM_THREAD_WORD_WEIGHT``; words are weighted by inverse document frequency within the
scope, ``log(1 + N / n)`` for a word in n of its N memories (a word in more than
``MM_THREAD_COMMON_SHARE`` of the scope's memories, such as a speaker's name, counts for
nothing; a word no other memory has counts against every thread),
the memory's own words at 1 and the words of its episode (the memories before it in its
session, ``Memory.episode_text``) at 0.5, so a short reply is placed by what it replies to.
Entities count through their names' words. It joins the best thread scoring at least
``MM_THREAD_MIN_SCORE``, else starts one; a memory with no counted word joins no thread.
Thresholds measured on LoCoMo (``benchmarks/threads.py``).

A thread is ``open`` while one of its members carries a cue with no answer after it: a plan
(will, going to, next week, tomorrow, soon…), waiting (waiting, pending, blocked, on hold, not
yet…), a question (a sentence ending in ``?``), or a date still ahead (``valid_from`` or
``observed_at`` later than now). A later member with a word of completion (done, finished,
resolved, fixed, went, cancelled…) answers every cue before it; any later member answers a
question. Otherwise the thread is ``resolved``. Its title is its three heaviest words.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from memories.divergence.detectors import NEGATIONS, STOP_WORDS, words

#: How mature what this module implements is, read by the readiness registry.
READINESS = {"E/threads": "beta"}
#: A thread keeps its heaviest words only (enough for its title and for comparing).
THREAD_WORDS_KEPT = 300
#: The weight of an episode's words beside the memory's own.
EPISODE_WORD_WEIGHT = 0.5
#: Words of a thread's title.
TITLE_WORDS = 3
#: The latest members whose cues decide a thread's status.
STATUS_MEMBERS = 200
#: However small the scope, a word in this many memories may still count.
COMMON_FLOOR = 10

CUES = (
    (
        "plan",
        re.compile(
            r"\b(will|going to|gonna|plan(?:s|ning)? to|intend(?:s)? to|next (?:week|month|year|"
            r"time)|tomorrow|soon|upcoming|later this)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "waiting",
        re.compile(
            r"\b(waiting|pending|blocked|on hold|stuck|follow(?:ing)? up|not yet|haven't yet)\b",
            re.IGNORECASE,
        ),
    ),
)
QUESTION = re.compile(r"\?(?:\s|$)")
DONE = re.compile(
    r"\b(done|finished|completed?|resolved|fixed|closed|shipped|solved|cancell?ed|delivered|"
    r"decided|went|did it|made it|signed)\b",
    re.IGNORECASE,
)


def own_words(text: str) -> set[str]:
    """The words of a text that can tie it to others: no stop words, negations or numbers, at
    least three letters."""
    return {
        word
        for word in words(text)
        if len(word) >= 3
        and word not in STOP_WORDS
        and word not in NEGATIONS
        and not word[0].isdigit()
    }


def weighted_words(text: str, episode_text: str) -> dict[str, float]:
    """A memory's words: its own at 1, its episode's at ``EPISODE_WORD_WEIGHT``."""
    found = dict.fromkeys(own_words(episode_text), EPISODE_WORD_WEIGHT)
    found.update(dict.fromkeys(own_words(text), 1.0))
    return found


@dataclass
class Vocabulary:
    """Document frequencies of a scope's words: which count, and how much."""

    memories: int
    frequency: dict[str, int]
    common_share: float

    def idf(self, word: str) -> float:
        seen = self.frequency.get(word, 0)
        limit = max(self.common_share * self.memories, COMMON_FLOOR)
        if seen < 1 or seen > limit or self.memories == 0:
            return 0.0
        return math.log(1 + self.memories / seen)

    def vector(self, weights: dict[str, float]) -> dict[str, float]:
        """``weights`` times idf, normalised (empty when no word counts)."""
        scaled = {w: v * self.idf(w) for w, v in weights.items()}
        scaled = {w: v for w, v in scaled.items() if v > 0}
        norm = math.sqrt(sum(v * v for v in scaled.values()))
        return {w: v / norm for w, v in scaled.items()} if norm else {}


def word_cosine(memory: dict[str, float], thread: dict[str, float]) -> float:
    """Both normalised (``Vocabulary.vector``)."""
    if len(memory) > len(thread):
        memory, thread = thread, memory
    return sum(v * thread.get(w, 0.0) for w, v in memory.items())


@dataclass
class ThreadState:
    """A thread as the phase holds it while it reads a batch."""

    pk: int | None
    scope_id: int
    label: str
    size: int
    centroid: np.ndarray  # the mean of the members' vectors
    words: dict[str, float]
    first_seen: datetime
    last_seen: datetime
    touched: bool = False
    new_members: list[tuple[int, dict]] = field(default_factory=list)

    def add(
        self,
        memory_id: int,
        vector: np.ndarray,
        weights: dict[str, float],
        when: datetime,
        evidence: dict,
    ) -> None:
        self.centroid = (self.centroid * self.size + vector) / (self.size + 1)
        self.size += 1
        for word, weight in weights.items():
            self.words[word] = self.words.get(word, 0.0) + weight
        if len(self.words) > THREAD_WORDS_KEPT * 2:
            self.words = dict(Counter(self.words).most_common(THREAD_WORDS_KEPT))
        self.first_seen = min(self.first_seen, when)
        self.last_seen = max(self.last_seen, when)
        self.touched = True
        self.new_members.append((memory_id, evidence))

    def kept_words(self) -> dict[str, float]:
        top = sorted(self.words.items(), key=lambda item: (-item[1], item[0]))
        return {w: round(v, 4) for w, v in top[:THREAD_WORDS_KEPT]}


def score(
    vector: np.ndarray,
    memory_words: dict[str, float],
    thread: ThreadState,
    vocabulary: Vocabulary,
    word_weight: float,
) -> tuple[float, float, float]:
    """(score, vector cosine, word cosine) of a memory against a thread (module docstring)."""
    norm = float(np.linalg.norm(thread.centroid))
    similarity = float(np.dot(vector, thread.centroid) / norm) if norm else 0.0
    overlap = word_cosine(memory_words, vocabulary.vector(thread.words))
    return (1 - word_weight) * similarity + word_weight * overlap, similarity, overlap


def title(thread_words: dict[str, float], vocabulary: Vocabulary) -> str:
    """The thread's heaviest counted words (weight times idf), ties in alphabetical order."""
    ranked = sorted(
        ((weight * vocabulary.idf(word), word) for word, weight in thread_words.items()),
        key=lambda item: (-item[0], item[1]),
    )
    chosen = [word for value, word in ranked if value > 0][:TITLE_WORDS]
    if not chosen:
        chosen = sorted(thread_words, key=lambda w: (-thread_words[w], w))[:TITLE_WORDS]
    return " · ".join(chosen).capitalize() or "(untitled)"


@dataclass(frozen=True)
class Member:
    """What status needs of a member, oldest first."""

    mem_id: str
    text: str
    written: datetime
    ahead: datetime | None  # valid_from or observed_at


def cues(members: list[Member], now: datetime) -> list[dict]:
    """The cues of ``members`` (oldest first) with no answer after them (module docstring)."""
    open_cues: list[dict] = []
    for member in members:
        if open_cues:
            if DONE.search(member.text):
                open_cues = []
            else:
                open_cues = [cue for cue in open_cues if cue["cue"] != "question"]
        found = []
        for name, pattern in CUES:
            match = pattern.search(member.text)
            if match:
                found.append({"cue": name, "words": match.group(0)})
        if QUESTION.search(member.text):
            found.append({"cue": "question", "words": "?"})
        if member.ahead is not None and member.ahead > now:
            found.append({"cue": "date ahead", "words": member.ahead.date().isoformat()})
        if found and DONE.search(member.text) and not any(c["cue"] == "question" for c in found):
            continue  # "we finished the plan": the member answers itself
        open_cues += [{"mem_id": member.mem_id, **cue} for cue in found]
    return open_cues
