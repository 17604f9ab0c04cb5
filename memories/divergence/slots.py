"""Whether two texts give different values of one slot of one subject, read without order: the
slot-and-value reading supersession uses (``memories.temporal``), asked of two writers'
memories where neither is the newer. Nothing here reads a value of its own:

* **Written** statements: a single-valued attribute given two values
  (``memories.lexicon.attributes``: a renewal month, a plan, an owner), or a value of one
  thing that cannot hold with the other's (``memories.temporal.corrections``' value finding,
  read both ways). As for supersession, the
  values' shared words must not be of different things ("a licence fee", "a support fee":
  ``judgment.distinguished``), and each text must assert its value as a present fact
  (``memories.temporal.stance``: not a hedge, a plan, a condition, a question or the past),
  here both texts since neither is the newer.
* **Spoken** values (``memories.temporal.spoken``, read both ways): a date, a time or a count of
  one unit with the same role on both sides, or where a trip starts or ends. A place something
  is "in" or "at" is left out: a firm has offices in Berlin and in Paris; so are a turn's
  choices ("Italian food", "Mexican food"), which several may hold.
"""

from __future__ import annotations

from memories.lexicon import attributes
from memories.temporal.corrections import findings
from memories.temporal.judgment import distinguished
from memories.temporal.spoken import changed
from memories.temporal.stance import ASSERTED, stance
from memories.temporal.values import WORD, values

#: Spoken kinds one thing has one value of, and the roles of a place that are single-valued.
SPOKEN_KINDS = frozenset({"date", "time", "count"})
SPOKEN_PLACES = frozenset({"origin", "destination"})


def differ(first: str, second: str) -> dict | None:
    """The first slot the two texts give different values of (module docstring), or None:
    ``{"reading": "written" or "spoken", "slot", "values": [first's, second's]}``. The same
    whichever text comes first, but for the order of ``values``."""
    return _written(first, second) or _spoken(first, second)


def _written(first: str, second: str) -> dict | None:
    before, after = attributes(first), attributes(second)
    found = [
        (slot, sorted(before[slot]), sorted(after[slot]))
        for slot in sorted(before.keys() & after.keys())
        if before[slot].isdisjoint(after[slot])
    ]
    for one, other, flipped in ((first, second, False), (second, first, True)):
        for finding in findings(one, other)[1]:
            if finding["rule"] == "value":
                pair = (finding["old"], finding["new"])
                found.append((finding["kind"], *(pair[::-1] if flipped else pair)))
    for slot, mine, theirs in found:
        given = frozenset(w.lower() for v in mine + theirs for w in WORD.findall(v))
        if distinguished(first, second, given):
            continue
        if any(stance(t, next((v.start for v in values(t)), None)) != ASSERTED
               for t in (first, second)):  # fmt: skip
            continue
        return {"reading": "written", "slot": slot, "values": [_bare(mine), _bare(theirs)]}
    return None


def _spoken(first: str, second: str) -> dict | None:
    for one, other, flipped in ((first, second, False), (second, first, True)):
        for old, new in changed(one, other):
            single = old.kind in SPOKEN_KINDS or old.role in SPOKEN_PLACES
            if old.kind == new.kind and old.role == new.role and single:
                pair = [_bare([old.text]), _bare([new.text])]
                slot = f"{old.kind} ({old.role})" if old.role else old.kind
                return {
                    "reading": "spoken",
                    "slot": slot,
                    "values": pair[::-1] if flipped else pair,
                }
    return None


def _bare(given: list[str]) -> list[str]:
    """Values as written, without the sentence's full stop ("March." is March)."""
    return [value.rstrip(".,;: ") for value in given]
