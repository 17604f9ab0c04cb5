"""Sentences with their named entities labelled, in CoNLL-2003's shape (Tjong Kim Sang and De
Meulder, 2003): ``WORD POS CHUNK NER`` a line, a blank line between sentences, ``-DOCSTART-``
lines start documents, tags IOB2 or IOB1 (an ``I-`` tag that does not continue a span of its
type starts one). WNUT 2017's two columns (``WORD TAG``, its six types, ``GOLD_TYPES``) read the
same way: a file without ``-DOCSTART-`` is one document. The data is not in this repository:
``benchmarks/entities.py`` and the readiness checks ``r.links.ner_*`` read it from its path.

A sentence's text is its tokens joined by single spaces; its gold spans are character offsets
in it, typed PER, ORG, LOC or MISC. Two systems are scored on the same sentences, exact match as
CoNLL scores them:

* ``model``: the spaCy model the engine loads, every entity mapped by its OntoNotes label
  (PERSON PER; ORG ORG; GPE, LOC, FAC LOC; NORP, PRODUCT, EVENT, WORK_OF_ART, LAW, LANGUAGE
  MISC; dates, numbers and amounts dropped);
* ``engine``: what the engine stores. Each document is a workspace with one agent, its sentences
  written in order through ``memory_remember_bulk`` (at most ``MM_BULK_MAX_ITEMS`` a call); the
  recogniser's types are counted again, as consolidation's ``link`` phase does; then each
  memory's active ``mentions`` links from the model or the gazetteer are read back: the spans
  in their evidence, the type their entity has (person PER, organization ORG, place LOC, any
  other MISC).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TYPES = ("PER", "ORG", "LOC", "MISC")
MODEL_TYPES = {"PERSON": "PER", "ORG": "ORG", "GPE": "LOC", "LOC": "LOC", "FAC": "LOC"} | {
    label: "MISC" for label in ("NORP", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW", "LANGUAGE")
}
ENGINE_TYPES = {"person": "PER", "organization": "ORG", "place": "LOC"}  # any other: MISC
#: The types of WNUT 2017's emerging entities (user-written text: posts, comments) as these four:
#: a group (a band, a team) is an organisation; products and creative works are MISC.
GOLD_TYPES = {
    "person": "PER",
    "location": "LOC",
    "corporation": "ORG",
    "group": "ORG",
    "product": "MISC",
    "creative-work": "MISC",
}
ORIGINS = ("extraction", "gazetteer")
Spans = set[tuple[int, int, str]]


@dataclass
class Sentence:
    text: str
    tokens: int
    gold: Spans = field(default_factory=set)


def read_conll(path: Path, limit_docs: int | None = None) -> list[list[Sentence]]:
    """Documents of sentences; IOB1 or IOB2 tags."""
    documents: list[list[Sentence]] = []
    words: list[tuple[str, str]] = []

    def close() -> None:
        if not words:
            return
        if not documents:  # a file without -DOCSTART-: one document
            documents.append([])
        text, gold, offset, span = " ".join(w for w, _ in words), set(), 0, None
        for word, tag in words:
            kind = GOLD_TYPES.get(tag[2:], tag[2:]) if tag[:2] in ("B-", "I-") else None
            continued = span is not None and tag.startswith("I-") and span[2] == kind
            if span and not continued:
                gold.add(tuple(span))
                span = None
            if kind and continued:
                span[1] = offset + len(word)
            elif kind:
                span = [offset, offset + len(word), kind]
            offset += len(word) + 1
        if span:
            gold.add(tuple(span))
        documents[-1].append(Sentence(text, len(words), gold))
        words.clear()

    for line in path.read_text(encoding="utf-8").splitlines():
        columns = line.split()
        if not columns:
            close()
        elif columns[0] == "-DOCSTART-":
            close()
            if limit_docs is not None and len(documents) == limit_docs:
                break
            documents.append([])
        else:
            words.append((columns[0], columns[-1]))
    else:
        close()
    return [d for d in documents if d][:limit_docs]


def model_spans(sentences: list[Sentence]) -> tuple[list[Spans], list[list[tuple]], float]:
    """The plain model's typed spans, its raw (start, end, label) entities, and seconds."""
    from memories.relational.extraction import get_recognizer

    started = time.perf_counter()
    raw = [
        [(e.start_char, e.end_char, e.label_) for e in doc.ents]
        for doc in get_recognizer().nlp.pipe(s.text for s in sentences)
    ]
    seconds = time.perf_counter() - started
    typed = [{(s, e, MODEL_TYPES[label]) for s, e, label in r if label in MODEL_TYPES} for r in raw]
    return typed, raw, seconds


def engine_spans(
    documents: list[list[Sentence]],
    agent_for: Callable[[int], Any],
    progress: Callable[[int, int], None] = lambda done, total: None,
) -> tuple[list[Spans], dict[str, Any], float]:
    """Each sentence's spans as the engine stores them (``agent_for(n)``: the agent of document
    n, in a workspace of its own), with counts and seconds."""
    from django.conf import settings

    from memories.models import Entity, Link
    from memories.operations import memory_remember_bulk
    from memories.services.relations.typing import retype_by_mentions

    per_call = int(settings.MM_BULK_MAX_ITEMS)
    found: list[Spans] = []
    origins, kinds = Counter(), Counter()
    started = time.perf_counter()
    for n, document in enumerate(documents):
        agent = agent_for(n)
        memories = []
        for first in range(0, len(document), per_call):
            batch = document[first : first + per_call]
            results = memory_remember_bulk(agent=agent, items=[{"text": s.text} for s in batch])
            memories += [r.memory.pk for r in results]
        # What consolidation's link phase does: the recogniser's types counted again.
        retype_by_mentions(agent.workspace_id)
        stored: dict[int, Spans] = {pk: set() for pk in memories}
        links = Link.objects.filter(
            source_id__in=memories,
            kind="mentions",
            removed_at__isnull=True,
            target_entity__isnull=False,
            origin__in=ORIGINS,
        ).select_related("target_entity__merged_into")
        for link in links:  # its entity's type now, after the document's last write
            entity: Entity = link.target_entity.merged_into or link.target_entity
            evidence = link.evidence or {}
            spans = evidence.get("spans")  # every mention, should the engine keep them all
            spans = spans if isinstance(spans, list) else [evidence.get("span")]
            origins[link.origin] += 1
            kinds[entity.kind] += 1
            kind = ENGINE_TYPES.get(entity.kind, "MISC")
            stored[link.source_id] |= {(span[0], span[1], kind) for span in spans if span}
        found += [stored[pk] for pk in memories]
        progress(n + 1, len(documents))
    seconds = time.perf_counter() - started
    stats = {"links": sum(origins.values()), "links_by_origin": dict(origins)}
    stats |= {"entity_kinds_linked": dict(kinds)}
    return found, {**stats, "per_call_max": per_call}, seconds


def prf(tp: int, predicted: int, gold: int) -> dict[str, Any]:
    p = tp / predicted if predicted else 0.0
    r = tp / gold if gold else 0.0
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    return {"precision": p, "recall": r, "f1": f1, "tp": tp, "predicted": predicted, "gold": gold}


def scores(gold: list[Spans], predicted: list[Spans]) -> dict[str, dict[str, Any]]:
    tp, pred, real, boundaries = Counter(), Counter(), Counter(), Counter()
    for g, p in zip(gold, predicted, strict=True):
        tp.update(t for _, _, t in g & p)
        pred.update(t for _, _, t in p)
        real.update(t for _, _, t in g)
        gb, pb = {s[:2] for s in g}, {s[:2] for s in p}
        boundaries.update(tp=len(gb & pb), pred=len(pb), gold=len(gb))
    result = {t: prf(tp[t], pred[t], real[t]) for t in TYPES}
    for name, types in (("micro", TYPES), ("micro_per_org_loc", TYPES[:3])):
        result[name] = prf(*(sum(c[t] for t in types) for c in (tp, pred, real)))
    result["spans"] = prf(boundaries["tp"], boundaries["pred"], boundaries["gold"])
    return result
