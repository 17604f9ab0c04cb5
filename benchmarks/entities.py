"""Named entities measured on outside data: what the engine stores beside the plain model.

    python benchmarks/entities.py --data path/to/conll2003/dev.txt --json /tmp/entities-dev.json

Sentences (``--data``, CoNLL-2003's shape: ``WORD POS CHUNK NER`` a line, a blank line between
sentences, ``-DOCSTART-`` lines start documents; tags IOB2, or IOB1 where an ``I-`` tag that
does not continue a span of its type starts one; the data is not in the repository): each
sentence's text is its tokens joined by single spaces, its gold spans character offsets in it,
typed PER, ORG, LOC or MISC. Two systems on the same sentences, exact match as CoNLL scores:

* ``model``: the spaCy model the engine loads (``get_recognizer().nlp``), every entity mapped
  by its OntoNotes label (PERSON PER; ORG ORG; GPE, LOC, FAC LOC; NORP, PRODUCT, EVENT,
  WORK_OF_ART, LAW, LANGUAGE MISC; dates, numbers and amounts dropped);
* ``engine``: what the engine stores. On its own embedded PostgreSQL (``--data-dir``), each
  document is a workspace with one agent, its sentences written in order through
  ``memory_remember_bulk`` (at most ``MM_BULK_MAX_ITEMS`` a call: the result depends on it, as
  a call's names resolve against the entities stored before it); then each memory's active
  ``mentions`` links from the model or the gazetteer are read back (after the recogniser's types
  are counted again, as consolidation's ``link`` phase does): the spans in their evidence, the
  type their entity has at the end of the document (person PER, organization ORG, place
  LOC, any other MISC). A sentence written twice in a document is one memory: both read it.

Printed: precision, recall and F1 per type for both, micro over the four and over PER, ORG and
LOC (the headline: the engine keeps no nationalities), and over boundaries alone; counts,
seconds, and the engine's first false positives and negatives. ``--limit-docs N``: the first N
documents. ``--smoke``: without ``--data``, a few sentences of its own in that shape. Timings
are printed, never asserted.
"""

from __future__ import annotations

import argparse
import hashlib
import shlex
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from common import (
    ROOT,
    add_data_options,
    add_smoke_option,
    describe,
    machine,
    setup_django,
    write_json,
)

from readiness.ner import (
    ENGINE_TYPES,
    TYPES,
    Sentence,
    Spans,
    engine_spans,
    model_spans,
    read_conll,
    scores,
)

#: ``--smoke``'s two documents, ``word/tag`` (the second tagged IOB1).
SMOKE = (
    (
        "Maria/B-PER Lopez/I-PER met/O Helios/B-ORG Bank/I-ORG in/O Berlin/B-LOC ./O",
        "Lopez/B-PER said/O the/O German/B-MISC bank/O would/O open/O an/O office/O in/O "
        "Lisbon/B-LOC next/O year/O ./O",
        "Helios/B-ORG Bank/I-ORG shares/O rose/O 3/O percent/O in/O Frankfurt/B-LOC on/O "
        "Tuesday/O ./O",
    ),
    (
        "John/I-PER Smith/I-PER of/O Acme/I-ORG Corp/I-ORG flew/O to/O Paris/I-LOC for/O the/O "
        "Olympic/I-MISC Games/I-MISC ./O",
        "Smith/I-PER met/O Anna/I-PER Weber/I-PER ,/O a/O French/I-MISC diplomat/O ,/O in/O "
        "London/I-LOC ./O",
        "Acme/I-ORG Corp/I-ORG said/O it/O would/O hire/O 200/O workers/O in/O Paris/I-LOC ./O",
    ),
)


def smoke_file(directory: Path) -> Path:
    lines = []
    for document in SMOKE:
        lines += ["-DOCSTART- -X- -X- O", ""]
        for sentence in document:
            lines += [f"{w} NN O {t}" for w, t in (p.rsplit("/", 1) for p in sentence.split())]
            lines.append("")
    path = directory / "smoke-conll.txt"
    path.write_text("\n".join(lines))
    return path


ROWS = {t: t for t in TYPES} | {"micro": "micro, all four"}
ROWS |= {"micro_per_org_loc": "**micro, PER+ORG+LOC**", "spans": "spans (type ignored)"}


def table(model: dict, engine: dict) -> str:
    lines = ["| type | gold | model P | model R | model F1 | engine P | engine R | engine F1 |"]
    lines.append("|---|---:|---:|---:|---:|---:|---:|---:|")
    for key, label in ROWS.items():
        m, e = model[key], engine[key]
        lines.append(
            f"| {label} | {m['gold']:,} | "
            + " | ".join(f"{x[k]:.3f}" for x in (m, e) for k in ("precision", "recall", "f1"))
            + " |"
        )
    return "\n".join(lines)


def examples(sentences: list[Sentence], predicted: list[Spans], limit: int = 10) -> dict:
    """The engine's first false positives (with the gold type at those boundaries, if any) and
    false negatives (with the engine's type there, if any)."""
    out: dict[str, list[dict]] = {"false_positives": [], "false_negatives": []}
    for s, p in zip(sentences, predicted, strict=True):
        for name, ours, theirs in (("false_positives", p, s.gold), ("false_negatives", s.gold, p)):
            for a, b, kind in sorted(ours - theirs)[: limit - len(out[name])]:
                there = next((t for x, y, t in theirs if (x, y) == (a, b)), None)
                context = s.text[max(0, a - 30) : b + 30]
                out[name].append({"span": s.text[a:b], "at": [a, b], "type": kind})
                out[name][-1].update(there=there, context=context)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, help="a CoNLL-2003 file (required unless --smoke)")
    parser.add_argument("--limit-docs", type=int, help="only the first N documents")
    add_data_options(parser, "entities-db", data=None)
    add_smoke_option(parser)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        if args.data is None:
            if not args.smoke:
                parser.error("--data is required (a CoNLL-2003 file) unless --smoke")
            args.data = smoke_file(Path(temporary))
        elif not args.data.exists():
            parser.error(f"--data {args.data} does not exist")
        if args.smoke:
            args.data_dir = ROOT / "benchmarks" / "out" / "smoke-entities"
        documents = read_conll(args.data, args.limit_docs)
        sha256 = hashlib.sha256(args.data.read_bytes()).hexdigest()
        dataset = {"file": args.data.name, "sha256": sha256}
    run(args, documents, dataset)


def run(args: argparse.Namespace, documents: list[list[Sentence]], dataset: dict) -> None:
    setup_django(args.data_dir)
    import spacy

    from memories.relational.extraction import LABEL_TYPES, MODEL_NAME, get_recognizer

    nlp = get_recognizer().nlp  # loaded once, before either system is timed
    sentences = [s for d in documents for s in d]
    gold = [s.gold for s in sentences]
    model, raw, model_s = model_spans(sentences)
    from django.db import connection

    from memories.models import Entity
    from memories.services import agent_create

    with connection.cursor() as cursor:  # this database is the benchmark's own: start it empty
        cursor.execute("TRUNCATE memories_workspace, memories_memory CASCADE")

    def agent_for(n: int):
        return agent_create(workspace_slug=f"conll-{n + 1:04d}", name="reader")[0]

    def progress(done: int, total: int) -> None:
        print(f"\r  engine: {done}/{total} documents", end="", file=sys.stderr)

    engine, stats, engine_s = engine_spans(documents, agent_for, progress)
    print(file=sys.stderr)
    stats["entities"] = Entity.objects.count()
    model_scores, engine_scores = scores(gold, model), scores(gold, engine)
    # The model's own kept names (the labels the engine keeps) that the engine did not store
    # with those boundaries, and those it stored with another type.
    kept = [(r, e) for rs, e in zip(raw, engine, strict=True) for r in rs if r[2] in LABEL_TYPES]
    lost = sum(1 for (a, b, _), e in kept if not any(s[:2] == (a, b) for s in e))
    retyped = sum(
        1
        for (a, b, label), e in kept
        for s in e
        if s[:2] == (a, b) and s[2] != ENGINE_TYPES.get(LABEL_TYPES[label], "MISC")
    )
    stats.update(model_names_kept=len(kept), not_stored=lost, stored_retyped=retyped)
    seen = examples(sentences, engine)
    git = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    commit = git.stdout.strip() if git.returncode == 0 else None
    tokens = sum(s.tokens for s in sentences)
    per_type = Counter(t for g in gold for _, _, t in g)
    package = f"{nlp.meta['lang']}_{nlp.meta['name']}-{nlp.meta['version']}"
    command = " ".join(shlex.quote(a) for a in ["python", *sys.argv])
    info = machine()
    print(f"\n`{command}`\n")
    print(describe(info))
    print(
        f"Data: {dataset['file']} (sha256 {dataset['sha256'][:12]}), {len(documents):,} "
        f"documents, {len(sentences):,} sentences, {tokens:,} tokens; gold spans "
        + ", ".join(f"{t} {per_type[t]:,}" for t in TYPES)
        + f". Model {MODEL_NAME} (spaCy {spacy.__version__}); engine at {commit or '?'}.\n"
    )
    print(table(model_scores, engine_scores))
    rate = {k: len(sentences) / max(v, 1e-9) for k, v in (("model", model_s), ("engine", engine_s))}
    print(
        f"\nSeconds: model {model_s:.1f} ({rate['model']:,.0f} sentences/s); engine "
        f"{engine_s:.1f} ({rate['engine']:,.0f} sentences/s: writes with embedding, scoring, "
        f"storing, at most {stats['per_call_max']:,} a call, then the links read back)."
    )
    print(
        f"Engine: {stats['links']:,} mention links ({stats['links_by_origin']}) to "
        f"{stats['entities']:,} entities; of the model's {len(kept):,} names with a label the "
        f"engine keeps, {lost:,} not stored with their boundaries and {retyped:,} stored under "
        f"another type. Linked entity kinds: {stats['entity_kinds_linked']}."
    )
    for name, rows in seen.items():
        other = "gold" if name == "false_positives" else "engine"
        print(f"\nEngine {name.replace('_', ' ')} (the first {len(rows)}; {other}'s type there):")
        for r in rows:
            print(f"  {r['type']:<4} {r['span']!r} ({r['there'] or '-'})  … {r['context']} …")
    write_json(
        args.json,
        {
            "command": command,
            "dataset": {**dataset, "documents": len(documents), "sentences": len(sentences)}
            | {"tokens": tokens, "gold_spans": {t: per_type[t] for t in TYPES}},
            "spacy_model": {"name": MODEL_NAME, "package": package, "spacy": spacy.__version__},
            "commit": commit,
            "model": {"scores": model_scores, "seconds": model_s},
            "engine": {"scores": engine_scores, "seconds": engine_s, **stats},
            "engine_examples": seen,
            "machine": info,
        },
    )


if __name__ == "__main__":
    main()
