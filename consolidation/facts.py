"""Optional fact extraction by a model (``MM_EXTRACTION_URL``: any OpenAI-compatible
``POST {url}/chat/completions`` endpoint, with ``MM_EXTRACTION_MODEL`` and
``MM_EXTRACTION_API_KEY``). With no endpoint configured, nothing is extracted and consolidation
does not pretend to: its ``extract`` phase is switched off.

The model is given a few episodic memories of one scope, each with its ``mem_id``, and answers
with one JSON object::

    {"facts": [{"text": "…", "from": ["<mem_id>", …], "scores": {"s": 0.8, "t": 0.3}}]}

Each fact that names only memories it was given, has a text of allowed length and scores
between 0 and 1 becomes a semantic memory of that scope (source ``extraction``, written at its
newest source's time, the scores with origin ``extraction``), with a ``derived_from`` link to
each memory it came from; anything else in the answer is counted as refused and left out.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from django.conf import settings

from memories.errors import MemoryEngineError
from memories.models import STARE_DIMENSIONS
from memories.remote import post_json

PROMPT = (
    "You read an agent's episodic memories (each with its mem_id) and write the standalone "
    "facts they establish: short statements that make sense without the conversation, with "
    "names instead of pronouns. Give each fact the mem_ids it comes from and, if you can, "
    "scores from 0 to 1 for s (how much it matters) and t (how time-bound it is). Answer with "
    'one JSON object and nothing else: {"facts": [{"text": "...", "from": ["<mem_id>"], '
    '"scores": {"s": 0.5}}]}. No facts: {"facts": []}.'
)
_OBJECT = re.compile(r"\{.*\}", re.DOTALL)
#: Memories sent to the model at a time.
BATCH = 20


class ExtractionModelError(MemoryEngineError):
    code = "extraction_model_failed"


@dataclass(frozen=True)
class Fact:
    text: str
    sources: list[str]
    scores: dict[str, float]


@dataclass
class Answer:
    facts: list[Fact] = field(default_factory=list)
    refused: int = 0


def configured() -> bool:
    return bool(settings.MM_EXTRACTION_URL)


def ask(memories: list[tuple[str, str]]) -> Answer:
    """The facts the model finds in ``memories`` (mem_id, text), checked (module docstring)."""
    url = settings.MM_EXTRACTION_URL.rstrip("/") + "/chat/completions"
    listing = "\n".join(f"[{mem_id}] {' '.join(text.split())}" for mem_id, text in memories)
    payload = post_json(
        url,
        {
            "model": settings.MM_EXTRACTION_MODEL,
            "temperature": 0,
            "messages": [
                {"role": "system", "content": PROMPT},
                {"role": "user", "content": listing},
            ],
        },
        api_key=settings.MM_EXTRACTION_API_KEY,
        timeout=settings.MM_EXTRACTION_TIMEOUT,
        error=ExtractionModelError,
        what="extraction model",
    )
    try:
        content = payload["choices"][0]["message"]["content"]
        facts = json.loads(_OBJECT.search(content).group(0))["facts"]
        if not isinstance(facts, list):
            raise TypeError("facts is not a list")
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        raise ExtractionModelError("extraction model returned an unexpected body") from exc
    given = {mem_id for mem_id, _ in memories}
    answer = Answer()
    for item in facts:
        fact = _checked(item, given)
        if fact is None:
            answer.refused += 1
        else:
            answer.facts.append(fact)
    return answer


def _checked(item: object, given: set[str]) -> Fact | None:
    if not isinstance(item, dict):
        return None
    text, sources, scores = item.get("text"), item.get("from"), item.get("scores") or {}
    if not isinstance(text, str) or not text.strip() or len(text) > settings.MM_MAX_TEXT_CHARS:
        return None
    if not isinstance(sources, list) or not sources or not set(sources) <= given:
        return None
    if not isinstance(scores, dict) or not set(scores) <= set(STARE_DIMENSIONS):
        return None
    if not all(
        isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v <= 1
        for v in scores.values()
    ):
        return None
    return Fact(
        text=" ".join(text.split()),
        sources=sorted(set(sources)),
        scores={k: float(v) for k, v in scores.items()},
    )
