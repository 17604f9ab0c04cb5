"""What consolidation does with a newer memory that may correct an older one of its subject:
``apply`` (the older is superseded), ``propose`` (a curator decides) or nothing. One rule for
every caller: the supersede phase, ``benchmarks/supersede.py`` and the readiness checks.

The findings, strongest first:

* **An explicit change** (``explicit``): the newer names the older's value as the one it
  replaces, in the words teams use: moved / changed / switched / pushed / raised / cut /
  upgraded … *from A to B*, *B instead of A*, *B rather than A*, *B, not A*, *no longer A*,
  *A left* (a person), or a "Correction:"; A must be what the older says (the same value, or its
  words).
* **A value changed** (``memories.temporal.corrections``): the two give values of one thing that
  cannot both hold; a number of something else ("the firm's 200 lawyers", "a pilot's 20"; "the
  licence fee", "the support fee") is another thing (``distinguished``).
* **A slot given another value** (``memories.divergence.detectors.attributes``: a renewal or due
  month, a plan, an owner).

Whatever is found, a newer statement that does not assert it as a present fact
(``memories.temporal.stance``: a hedge, a plan, a condition, a question, the past) never
supersedes anything: an explicit change said that way is proposed, anything else is left. An
asserted change is applied when the writer is the same (or it is one conversation) and the newer
says it changes something (an explicit change, or a cue such as "now", "moved", "updated"), or
when the model fitted on outside claim pairs is confident; otherwise it is proposed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memories.lexicon import attributes
from memories.temporal.corrections import CUES, NEGATION_OVERLAP, assess, model
from memories.temporal.stance import ASSERTED, stance
from memories.temporal.values import WORD, values

#: Verbs that say a value was changed (the explicit "from A to B").
CHANGE_VERBS = (
    r"moved|moves|changed|changes|switched|switches|replaced|pushed(?:\s+back)?|slipped|"
    r"extended|raised|cut|upgraded|downgraded|increased|reduced|lowered|bumped|shifted|"
    r"rescheduled|postponed|delayed|updated|grew|dropped|went|brought\s+forward|lifted|"
    r"decreased|expanded|renamed|migrated|converted|transferred|reassigned|handed\s+over"
)
_PHRASE = r"[^\s,.;:()]+(?:\s+[^\s,.;:()]+){0,3}?"
#: "moved its renewal from March to June", "upgraded from Starter to Pro".
_FROM_TO = re.compile(
    rf"\b(?:{CHANGE_VERBS})\b[^.;]{{0,60}}?\bfrom\s+(?:the\s+)?(?P<old>{_PHRASE})\s+to\s+"
    rf"(?:the\s+)?(?P<new>{_PHRASE})(?=[\s,.;:()]|$)",
    re.IGNORECASE,
)
#: "June instead of March", "June, not March", "June rather than March".
_INSTEAD = re.compile(
    rf"(?P<new>{_PHRASE})\s*(?:,?\s+(?:instead\s+of|rather\s+than)|,\s*(?:and\s+)?not|\s+and\s+not)\s+"
    rf"(?:in\s+|on\s+|at\s+|the\s+|by\s+)?(?P<old>{_PHRASE})(?=[\s,.;:()]|$)",
    re.IGNORECASE,
)
#: "no longer on the Starter plan", "not on Gold any more".
_NO_LONGER = re.compile(
    rf"\b(?:no\s+longer|not\s+any\s*more|isn't\s+any\s*more)\s+(?:\w+\s+)?(?:on\s+|in\s+|at\s+|"
    rf"the\s+|a\s+)*(?P<old>{_PHRASE})(?=[\s,.;:()]|$)",
    re.IGNORECASE,
)
#: "Dana Lee left", "Dana Lee has left Orion", "Dana Lee is no longer with them".
_LEFT = re.compile(
    r"(?P<old>[A-Z][\w'’-]+(?:\s+[A-Z][\w'’-]+){0,3})\s+(?:has\s+|have\s+|had\s+)?"
    r"(?:left|departed|quit|resigned|retired|stepped\s+down|moved\s+on|is\s+leaving|"
    r"is\s+no\s+longer\s+(?:with|at))\b"
)
#: A newer text that says it corrects: "Correction:", "to correct", "correcting".
_CORRECTION = re.compile(r"\b(?:correction|to\s+correct|correcting|corrected|erratum)\b", re.I)


@dataclass(frozen=True)
class Judgment:
    """What to do with a pair (``verdict``: ``apply``, ``propose`` or ``""``) and why: the
    finding's ``rule``, the slot (``attribute``), the old and new values, the newer's stance and
    the model's score where it was asked."""

    verdict: str
    rule: str = ""
    attribute: str = ""
    old: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)
    stance: str = ASSERTED
    score: float | None = None
    why: str = ""


def _words(text: str) -> list[str]:
    return [w.lower() for w in WORD.findall(text.replace("’", "'"))]


#: Words before a shared word that say nothing of what it is ("now renews", "still pays").
_NOT_MODIFIERS = frozenset(
    [
        "now",
        "still",
        "also",
        "currently",
        "just",
        "actually",
        "already",
        "again",
        "then",
        "today",
        "recently",
        "finally",
    ]
)


def _said_in(phrase: str, older: str) -> str:
    """The kind of what ``phrase`` names when the older text says it (a value of the same kind
    that agrees, or all of its words, "the" aside), else ``""``."""
    given = values(phrase)
    if given:
        before = values(older)
        for value in given:
            if any(v.kind == value.kind and v.agrees(value) for v in before):
                return value.kind
        return ""
    from memories.lexicon import STOP_WORDS

    words = [w for w in _words(phrase) if w not in ("the", "a", "an", "its", "their", "our")]
    content = [w for w in words if w not in STOP_WORDS and len(w) > 2]
    if content and all(w in set(_words(older)) for w in words):
        return "name" if phrase[:1].isupper() else "words"
    return ""


def explicit(older: str, newer: str) -> dict | None:
    """An explicit change in ``newer`` of a value ``older`` gives (module docstring), or None:
    ``{"rule": "explicit", "marker", "kind", "old", "new", "at"}``."""
    for marker, pattern in (("from … to", _FROM_TO), ("instead of", _INSTEAD),
                            ("no longer", _NO_LONGER), ("left", _LEFT)):  # fmt: skip
        for match in pattern.finditer(newer):
            old = match.group("old").strip()
            kind = _said_in(old, older)
            new = match.groupdict().get("new") or ""
            if marker == "instead of" and (given := values(new)):
                new = given[-1].text  # "now renews in June instead of March": June
            if kind and (not new or not _said_in(new, older) or marker == "from … to"):
                return {
                    "rule": "explicit",
                    "marker": marker,
                    "kind": kind,
                    "old": [old],
                    "new": [new.strip()] if new else [],
                    "at": match.start(),
                }
    if _CORRECTION.search(newer):
        change = next((f for f in assess(older, newer).findings if f["rule"] == "value"), None)
        if change is not None:
            return {
                "rule": "explicit",
                "marker": "correction",
                "kind": change["kind"],
                "old": change["old"],
                "new": change["new"],
                "at": 0,
            }
    return None


def distinguished(older: str, newer: str, values_given: frozenset[str] = frozenset()) -> bool:
    """Whether the values' shared words are of different things: a word the two texts share
    ("fee", "lawyers") is preceded by another content word on each side ("licence fee",
    "support fee"); the words of the values themselves ("gold plan", "silver plan") do not
    count."""
    modifiers_before = _modifiers(older)
    modifiers_after = _modifiers(newer)
    for word in set(modifiers_before) & set(modifiers_after):
        first = modifiers_before[word] - values_given
        second = modifiers_after[word] - values_given
        if first and second and first.isdisjoint(second):
            return True
    return False


def _modifiers(text: str) -> dict[str, set[str]]:
    """Each content word of ``text`` and the content word just before it, if any: a name's
    words (in capitals) and words such as "now" are not modifiers."""
    from memories.lexicon import STOP_WORDS

    written = WORD.findall(text.replace("’", "'"))
    words = [w.lower() for w in written]
    found: dict[str, set[str]] = {}
    for i, word in enumerate(words):
        if word in STOP_WORDS or word[0].isdigit():
            continue
        before = words[i - 1] if i else ""
        kept = (
            before
            and before not in STOP_WORDS
            and before not in _NOT_MODIFIERS
            and not before[0].isdigit()
            and not written[i - 1][:1].isupper()
        )
        found.setdefault(word, set()).update({before.removesuffix("'s")} if kept else set())
    return found


def judge(
    older: str,
    newer: str,
    *,
    same_source: bool,
    conversation: bool = False,
    turns: list | None = None,
) -> Judgment:
    """What to do with ``newer`` written after ``older`` about one subject (module
    docstring). ``same_source``: one writer wrote both; ``conversation``: both are turns of
    one session, the subject being what the session is about (``turns``: the values of the
    older the newer changes, as ``judge_session`` reads them; by default the two alone)."""
    found = explicit(older, newer)
    if found is None and conversation and (turn := _turn_change(older, newer, turns)):
        return turn
    if found is not None:
        said = stance(newer, found["at"])
        sure = said == ASSERTED and (same_source or conversation)
        if conversation and found["kind"] in ("words", "name"):
            sure = False  # a turn's words are too loose to take one back on their own
        more = sure and says_more(older, newer)
        return Judgment(
            "apply" if sure and not more else "propose",
            "explicit",
            found["kind"],
            found["old"],
            found["new"],
            said,
            why=f"explicit change ({found['marker']})"
            + ("" if said == ASSERTED else f", {said}")
            + (", same writer" if same_source else "")
            + (", the older says more" if more else ""),
        )
    if conversation:
        return Judgment("")  # a turn's values are read as said (``_turn_change``) or not at all
    correction = assess(older, newer)
    slot = _slot(older, newer)
    change = next((f for f in correction.findings if f["rule"] in ("denial", "value")), None)
    if change is None and slot is None:
        negated = any(f["rule"] == "negation" for f in correction.findings)
        if negated and correction.overlap >= NEGATION_OVERLAP and stance(newer) == ASSERTED:
            return Judgment("propose", "negation", "negation", ["said"], ["not said"],
                            score=correction.score, why="one side negates the other")  # fmt: skip
        return Judgment("")
    given = frozenset(w for side in (slot[1:] if slot else ()) for v in side for w in _words(v))
    if distinguished(older, newer, given) and (change is None or change["rule"] != "denial"):
        return Judgment("", why="the values are of different things")
    where = next((v.start for v in values(newer)), None)
    said = stance(newer, where)
    if said != ASSERTED:
        return Judgment("", stance=said, why=f"the newer is {said}")
    if change is not None:
        rule, attribute = change["rule"], change["kind"]
        old = change.get("old") or [change.get("denied", "")]
        new = change.get("new") or ["denied"]
    else:
        rule, (attribute, old, new) = "slot", slot
    single = len(old) == 1 and len(new) == 1
    cued = bool(CUES.search(newer))
    confident = correction.score >= model().confident
    sure = confident or ((same_source or conversation) and single and (cued or rule == "denial"))
    more = sure and says_more(older, newer)
    verdict = "apply" if sure and not more else "propose"
    why = (
        (
            f"correction detector: score {correction.score:.2f} (model), {rule}"
            if rule != "slot"
            else "a slot given another value"
        )
        + (", same writer" if same_source else "")
        + (", the older says more" if more else "")
    )
    old, new = [_bare(v) for v in old], [_bare(v) for v in new]
    return Judgment(verdict, rule, attribute, old, new, said, correction.score, why)


def says_more(older: str, newer: str) -> bool:
    """Whether the older gives a value of a kind the newer gives none of ("Orion has 300 seats
    and renews in March" against "Orion now renews in June"): superseding it would hide that
    value, true for all the newer says, so a curator decides."""
    given = {v.kind for v in values(newer)} - {"stamp"}
    return any(v.kind not in given for v in values(older) if v.kind != "stamp")


def _bare(value: str) -> str:
    """A value as written, without the sentence's full stop ("March." is March)."""
    return value.rstrip(".,;: ")


#: Words of a turn that take back what an earlier turn said.
_TURN_CUE = re.compile(
    r"\b(?:actually|instead|change|changed|make\s+it|make\s+that|rather|sorry|i\s+meant|"
    r"correction|switch|mistake|no\s*,|nope)\b",
    re.IGNORECASE,
)
_TURN_HEDGE = re.compile(r"\b(?:maybe|perhaps|might|possibly|not\s+sure)\b", re.IGNORECASE)


def judge_session(earlier: list[str], newer: str, *, same_source: bool) -> list[Judgment]:
    """``judge`` of ``newer`` against each earlier turn of its session (nearest first): a
    value the newer gives is compared with the nearest turn that gave one of the same thing
    (``memories.temporal.spoken.changes``), never with a turn it replaced already."""
    from memories.temporal.spoken import changes

    found = changes(earlier, newer)
    return [
        judge(older, newer, same_source=same_source, conversation=True, turns=found.get(i, []))
        for i, older in enumerate(earlier)
    ]


def _turn_change(older: str, newer: str, pairs: list | None) -> Judgment | None:
    """Two turns of one conversation: a value the newer says of a thing the older gave a
    value of (``memories.temporal.spoken``); applied when the newer says it takes the older
    back ("actually", "make it", "instead", "no,") and changes one thing only."""
    from memories.temporal.spoken import changed, said

    pairs = changed(older, newer) if pairs is None else pairs
    if not pairs:
        return None
    cue = _TURN_CUE.search(newer)
    old, new = pairs[0]
    sure = (
        cue is not None
        and len(pairs) == 1
        and old.role == new.role
        # A date said in a conversation is of many things (a trip's, a stay's, a car's, the
        # weather's): measured on dialogue data, a changed date is right too rarely to apply.
        and new.kind != "date"
        and sum(v.kind == new.kind for v in said(newer)) == 1
        and sum(v.kind == old.kind for v in said(older)) == 1
        # Superseding the earlier turn hides all it said: only when it said nothing else the
        # later turn does not say again ("for 4 people at 7 pm" stays: its time still holds).
        and all(any(v.kind == w.kind for w in said(newer)) for v in said(older))
        and not _TURN_HEDGE.search(newer)
    )
    return Judgment(
        "apply" if sure else "propose",
        "turn",
        f"{new.kind} ({new.role})" if new.role else new.kind,
        [p[0].text for p in pairs],
        [p[1].text for p in pairs],
        why="a later turn of the session gives another value"
        + (f" ({cue.group().lower()})" if cue else ""),
    )


def _slot(older: str, newer: str) -> tuple[str, list[str], list[str]] | None:
    """The first single-valued slot (``attributes``) the two fill with no value in common."""
    before, after = attributes(older), attributes(newer)
    for slot in sorted(before.keys() & after.keys()):
        if before[slot].isdisjoint(after[slot]):
            return slot, sorted(before[slot]), sorted(after[slot])
    return None


#: A name written in capitals: one word or more ("Orion Health", "Marlow & Finch", "Blue Ridge
#: Savings Bank"), joined by "&", "of", "and", "de".
_NAME = re.compile(
    r"\b[A-Z][\w'’-]*[A-Za-z0-9](?:\s+(?:(?:&|and|of|de|von|van)\s+)?[A-Z][\w'’-]*[A-Za-z0-9])*"
)
#: Capitalised words that are not names on their own.
_NOT_NAMES = frozenset(
    re.findall(
        r"\w+",
        "I The A An This That These Those It Its We Our They Their He She His Her You Your "
        "Yes No Not Now Then Also But And Or If When Correction Note Update Actually Today "
        "Tomorrow Yesterday Please Thanks",
    )
)


def names(text: str) -> list[str]:
    """The names ``text`` writes in capitals (``_NAME``), without the words that start a
    sentence only because they start it ("The", "Yes", a month or a weekday): each a subject
    two memories may share."""
    from memories.temporal.values import MONTHS, WEEKDAYS

    found: list[str] = []
    for match in _NAME.finditer(text):
        words = match.group().split()
        while words and (words[0] in _NOT_NAMES or words[0].lower() in MONTHS + WEEKDAYS):
            words = words[1:]
        while words and words[-1].lower() in ("&", "and", "of", "de", "von", "van"):
            words = words[:-1]
        name = " ".join(words)
        # "CTO of Blue Ridge Savings Bank": the whole, and each side of its "of".
        for part in [name, *name.split(" of ")] if " of " in name else [name]:
            if len(part) >= 3 and part not in found and part not in _NOT_NAMES:
                found.append(part)
    return found


def mentions(text: str, name: str) -> bool:
    """Whether ``text`` writes ``name`` as a name: the same words, in capitals."""
    return re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", text) is not None


def worth_reading(text: str) -> bool:
    """Whether a newer text can correct anything (cheap; the phase reads only these)."""
    from memories.temporal.corrections import worth_reading as gives_or_cues

    return bool(
        gives_or_cues(text)
        or attributes(text)
        or any(p.search(text) for p in (_FROM_TO, _INSTEAD, _NO_LONGER, _LEFT, _CORRECTION))
    )
