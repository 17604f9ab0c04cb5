"""The gated checks on data fetched for them and never kept here: correction pairs in
VitaminC's shape and sentences with named entities in CoNLL-2003's shape, measured on files of
the test's own making (the figures from the real files are BENCHMARKS.md's and the release's)."""

import json
from io import StringIO

from django.core.management import call_command

from readiness.corrections import held_out
from readiness.models import EvaluationRun, Evidence

PAIRS = [
    ("Atlas Foods renews its contract in March.", "Atlas Foods renews it in September.", True),
    ("Zephyr renews every March.", "Zephyr renews in June, not March.", True),
    ("The team has 40 engineers.", "The team has 25 engineers after the cuts.", True),
    ("Sales reached more than $2 million.", "Sales reached $1.4 million in 2023.", True),
    ("The launch was on May 3, 2024.", "The launch happened on May 3, 2024.", False),
    ("Revenue grew by more than 10%.", "Revenue grew by 12% last year.", False),
    ("The warehouse is in Rotterdam.", "The warehouse ships on Tuesdays.", False),
    ("Maria owns the billing project.", "Maria likes the billing project.", False),
]


def test_stare_eval_with_corrections_records_the_held_out_precision(db, tmp_path):
    pages = [f"page {n}" for n in range(200) if held_out(f"page {n}")]
    path = tmp_path / "claims.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                {
                    "claim": a,
                    "evidence": b,
                    "label": "REFUTES" if refutes else "SUPPORTS",
                    "page": page,
                }
            )
            + "\n"
            for (a, b, refutes), page in zip(PAIRS, pages, strict=False)
        )
    )
    out = StringIO()
    call_command("stare-eval", "--corrections", str(path), stdout=out)
    run = Evidence.objects.get(check_id="t.corrections.heldout_precision")
    assert run.dataset == "claims.jsonl" and len(run.dataset_sha256) == 64
    assert run.detail["pairs"] == 8 and run.detail["positives"] == 4
    assert 0 <= run.value <= 1 and "cosine_auc" in run.detail
    # The same held-out claims as two writers' pairs: the divergence detector's AUC.
    divergence = Evidence.objects.get(check_id="r.divergence.claims_auc")
    assert divergence.dataset == "claims.jsonl" and divergence.detail["pairs"] == 8
    assert divergence.detail["positives"] == 4 and "slot_rule_auc" in divergence.detail
    # Another shape: said, and not recorded as the detector's failure.
    path.write_text(json.dumps({"claim": "a", "label": "REFUTES"}) + "\n")
    out = StringIO()
    call_command("stare-eval", "--corrections", str(path), stdout=out)
    assert "t.corrections.heldout_precision: not run: claims.jsonl is not pairs" in out.getvalue()
    assert Evidence.objects.filter(check_id="t.corrections.heldout_precision").count() == 1


CONLL = """-DOCSTART- -X- -X- O

Maria NNP B-NP B-PER
Lopez NNP I-NP I-PER
met VBD B-VP O
Helios NNP B-NP B-ORG
Bank NNP I-NP I-ORG
in IN B-PP O
Berlin NNP B-NP B-LOC
. . O O

The DT B-NP O
API NNP I-NP O
returns VBZ B-VP O
CSV NNP B-NP O
files NNS I-NP O
to TO B-PP O
Helios NNP B-NP B-ORG
Bank NNP I-NP I-ORG
. . O O
"""


def test_stare_eval_with_ner_records_the_engine_against_the_model(db, tmp_path):
    path = tmp_path / "sentences.txt"
    path.write_text(CONLL)
    call_command("stare-eval", "--ner", str(path), stdout=StringIO())
    gain = Evidence.objects.get(check_id="r.links.ner_precision_gain")
    kept = Evidence.objects.get(check_id="r.links.ner_recall_kept")
    assert gain.detail["gold"] == 4 and gain.detail["documents"] == 1
    assert gain.value == gain.detail["engine_precision"] - gain.detail["model_precision"]
    assert kept.value == kept.detail["engine_recall"] - kept.detail["model_recall"]
    # The checks wrote in a sandbox: nothing of them is left.
    from memories.models import Memory

    assert not Memory.objects.exists()
    run = EvaluationRun.objects.latest("id")
    assert run.datasets["ner"]["file"] == "sentences.txt"
    # Another shape measures nothing.
    path.write_text("no entities here\n")
    out = StringIO()
    call_command("stare-eval", "--ner", str(path), stdout=out)
    assert "r.links.ner_precision_gain: not run:" in out.getvalue()
