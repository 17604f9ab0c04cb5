"""Asymmetry's cues: where a memory's claim came from, read from its own words (offline, no
model). They fill only what the writer did not say, and each value they set is marked with its
origin and the words that set it (``Memory.attribution``).

* Reported speech names who made the claim and makes it ``stated``: "according to Maria",
  "Maria said (that)", "Maria told me", "as Maria put it".
* Second-hand reports make it ``hearsay``: "I heard that", "reportedly", "rumour has it",
  "apparently", "supposedly", "people say"; "Maria heard from Tom that" names Tom.
* Hedges and first-person inference make it ``inferred``: "I think", "probably", "it seems",
  "must have", "I guess", "I suspect", "so I conclude".
* A tool's output makes it ``tool``: "the API returned", "the logs show", "according to the
  dashboard" (a tool named after "according to").
* First-hand observation makes it ``observed``: "I saw", "I checked", "we verified", "I measured".

The first cue in that order wins. ``clarity`` is how clearly each kind says where a claim came
from: the A score's first factor (``memories.asymmetry.score``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memories.models import Memory

#: How clearly a kind of source says where its claim came from (blank: nothing says).
CLARITY = {
    Memory.SourceKind.OBSERVED: 1.0,
    Memory.SourceKind.TOOL: 0.9,
    Memory.SourceKind.STATED: 0.8,  # with whom; 0.6 without (``clarity``)
    "": 0.5,
    Memory.SourceKind.INFERRED: 0.4,
    Memory.SourceKind.HEARSAY: 0.3,
}
UNNAMED_STATED = 0.6

# A name: one to four capitalised words ("Maria", "Dr Chen", "Acme Corp"), possibly joined by
# "of"/"de"/"van"; sentence-initial pronouns are not names.
_NAME = (
    r"(?P<name>(?:[A-Z][\w'&.-]*)(?:\s+(?:(?:of|de|van|von|der|la|del)\s+)?[A-Z][\w'&.-]*){0,3})"
)
_SPEECH_VERBS = (
    r"said|says|told\s+(?:me|us|him|her|them|the\s+team)|tells\s+(?:me|us)|claims|claimed|"
    r"reported|reports|mentioned|stated|states|announced|wrote|writes|explained|confirmed|"
    r"insisted|argued|insists|argues|assured\s+(?:me|us)|promised|warned|noted"
)
_TOOLS = (
    r"api|tool|logs?|dashboard|monitor(?:ing)?|query|script|command|build|test\s+run|"
    r"ci|crm|database|report|spreadsheet|metrics?"
)
#: Capitalised words that are no one: pronouns, and words that start a sentence before a name
#: ("Yesterday Maria said" names Maria).
_NOT_NAMES = {
    "I",
    "We",
    "He",
    "She",
    "They",
    "It",
    "You",
    "Someone",
    "Everyone",
    "Nobody",
    "People",
    "Somebody",
}
_LEADING = {
    "A",
    "An",
    "The",
    "This",
    "That",
    "Then",
    "When",
    "While",
    "Yesterday",
    "Today",
    "Tonight",
    "Later",
    "Earlier",
    "Also",
    "And",
    "But",
    "So",
    "Now",
    "On",
    "In",
    "At",
    "After",
    "Before",
    "Last",
    "Next",
    "Once",
    "Still",
    "Here",
    "There",
    "Because",
    "If",
    "As",
    "Finally",
}

HEARSAY_FROM = re.compile(rf"\bheard\s+from\s+{_NAME}", re.UNICODE)
HEARSAY = re.compile(
    r"\b(?:i|we)\s+heard\b|\breportedly\b|\brumou?r(?:s|ed)?\b|\bapparently\b|\bsupposedly\b|"
    r"\ballegedly\b|\b(?:people|they|folks)\s+say\b|\bword\s+is\b|\bsecond-?hand\b",
    re.IGNORECASE,
)
TOOL = re.compile(
    rf"\b(?:the|our)\s+(?:{_TOOLS})\s+(?:returned|returns|shows?|showed|reported|reports|says|"
    rf"said|output|printed|lists?|listed)\b|\baccording\s+to\s+(?:the|our)\s+(?:{_TOOLS})\b",
    re.IGNORECASE,
)
ACCORDING = re.compile(rf"\b(?i:according\s+to|as\s+per)\s+{_NAME}", re.UNICODE)
SPEECH = re.compile(rf"{_NAME}\s+(?:{_SPEECH_VERBS})\b", re.UNICODE)
PUT_IT = re.compile(rf"\bas\s+{_NAME}\s+(?:put|puts)\s+it\b", re.UNICODE)
UNNAMED_SPEECH = re.compile(
    rf"^\s*(?:says|said|claims|claimed)\b|\b(?:he|she|they)\s+(?:{_SPEECH_VERBS})\b",
    re.IGNORECASE,
)
INFERRED = re.compile(
    r"\b(?:i|we)\s+(?:think|believe|guess|suspect|assume|reckon|infer|conclude|figure|expect)\b|"
    r"\b(?:probably|likely|maybe|perhaps|presumably|possibly|seemingly)\b|"
    r"\b(?:it\s+)?(?:seems|appears)\s+(?:to|that|like)\b|\b(?:must|might|may)\s+have\b|"
    r"\bmy\s+(?:guess|hunch|impression|sense)\b|\bso\s+(?:i|we)\s+(?:think|conclude)\b",
    re.IGNORECASE,
)
OBSERVED = re.compile(
    r"\b(?:i|we)\s+(?:saw|see|observed|watched|noticed|measured|checked|verified|confirmed|"
    r"tested|counted|witnessed|heard\s+(?:it|him|her|them)\s+say)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Cue:
    """What the text says about its claim's origin: a kind, perhaps who, and the words."""

    source_kind: str
    words: str
    name: str = ""

    def as_origin(self) -> dict[str, str]:
        return {"origin": "cue", "words": self.words}


def _name(match: re.Match[str]) -> str:
    words = match.group("name").strip(" .'").split()
    while words and words[0] in _LEADING:
        words.pop(0)
    if not words or words[0] in _NOT_NAMES:
        return ""
    return " ".join(words)


def read_cues(text: str) -> Cue | None:
    """The first cue the text gives about its claim's origin (see the module's order)."""
    if found := HEARSAY_FROM.search(text):
        return Cue(Memory.SourceKind.HEARSAY, found.group(0), _name(found))
    if found := HEARSAY.search(text):
        return Cue(Memory.SourceKind.HEARSAY, found.group(0))
    if found := TOOL.search(text):
        return Cue(Memory.SourceKind.TOOL, found.group(0))
    for pattern in (ACCORDING, PUT_IT, SPEECH):
        for found in pattern.finditer(text):
            if name := _name(found):
                return Cue(Memory.SourceKind.STATED, found.group(0), name)
    if found := UNNAMED_SPEECH.search(text):
        return Cue(Memory.SourceKind.STATED, found.group(0).strip())
    if found := INFERRED.search(text):
        return Cue(Memory.SourceKind.INFERRED, found.group(0))
    if found := OBSERVED.search(text):
        return Cue(Memory.SourceKind.OBSERVED, found.group(0))
    return None


def clarity(source_kind: str, attributed: bool) -> float:
    """How clearly a memory says where its claim came from, 0 to 1 (``CLARITY``)."""
    if source_kind == Memory.SourceKind.STATED and not attributed:
        return UNNAMED_STATED
    return CLARITY.get(source_kind, CLARITY[""])
