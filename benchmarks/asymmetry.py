"""Asymmetry (A) measured on outside data: do A scores tell statements that were right from
statements that were wrong?

    python benchmarks/asymmetry.py --train ../shared/data/liar/train.tsv \\
        --eval ../shared/data/liar/valid.tsv --json benchmarks/out/asymmetry.json

Files of LIAR's shape (``readiness.liar``; ``../shared/data/README.md``). On its own embedded
PostgreSQL (``--data-dir``), the ``--train`` statements are written as memories (source and
``attributed_to`` the speaker, the subjects and context as entities), each PolitiFact verdict
is replayed through the engine's feedback (true, mostly-true: important; false, pants-fire:
demote), the records and A scores are refreshed, then the ``--eval`` statements are written
and their A scores, given on writing, are compared with their verdicts: AUC of
true/mostly-true against false/pants-fire, side by side with the baselines on the same
statements (confidence: no hedge word; the speaker's share of true verdicts in the training
statements; "holds a number").

``--fit`` also fits the A model on the training statements (each statement's own verdict left
out of the records it reads) and writes it to ``memories/data/asymmetry_model.json`` before the
``--eval`` statements are written: the model is never fitted on what it is measured on.
``--smoke``: the first 300 training and 100 evaluation statements, nothing written to the
model file. Timings are printed, never asserted.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shlex
import sys
import time
from pathlib import Path

from common import ROOT, add_smoke_option, describe, machine, setup_django, write_json

LIAR = ROOT.parent / "shared" / "data" / "liar"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--train", type=Path, default=LIAR / "train.tsv")
    parser.add_argument("--eval", type=Path, default=LIAR / "valid.tsv")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument(
        "--data-dir", type=Path, default=ROOT / "benchmarks" / "out" / "asymmetry-db"
    )
    parser.add_argument(
        "--fit", action="store_true", help="fit the A model on --train and write it first"
    )
    add_smoke_option(parser)
    args = parser.parse_args()
    for name in ("train", "eval"):
        if not getattr(args, name).exists():
            parser.error(f"--{name} {getattr(args, name)} does not exist")
    if args.smoke:
        args.data_dir = ROOT / "benchmarks" / "out" / "smoke-asymmetry"
    setup_django(args.data_dir)

    from memories.asymmetry import score as asymmetry
    from memories.models import Agent, Memory, Workspace
    from memories.services import agent_create
    from readiness import liar

    train = liar.read(args.train, limit=300 if args.smoke else None)
    measured = liar.read(args.eval, limit=100 if args.smoke else None)
    # A run of its own: the last run's workspace goes (its memories and agents first: scopes
    # are protected while they hold them).
    Memory.objects.filter(workspace__slug="liar").delete()
    Agent.objects.filter(workspace__slug="liar").delete()
    Workspace.objects.filter(slug="liar").delete()
    agent, _ = agent_create(workspace_slug="liar", name="benchmark")
    times: dict[str, float] = {}
    started = time.perf_counter()
    last = {"name": "", "at": started}

    def progress(name: str, done: int, total: int) -> None:
        if name != last["name"]:
            now = time.perf_counter()
            if last["name"]:
                times[last["name"]] = now - last["at"]
            last.update(name=name, at=now)
        print(f"\r  {name}: {done:,}/{total:,}", end="", file=sys.stderr, flush=True)

    fitted: dict = {}

    def fit(records, claims, verdicts) -> None:
        fitted.update(liar.fitted_model(records, claims, verdicts))
        if not args.smoke:
            asymmetry.MODEL_PATH.write_text(json.dumps(fitted, indent=2) + "\n")
            asymmetry.model.cache_clear()

    result = liar.measure(agent, train, measured, fit=fit if args.fit else None, progress=progress)
    times[last["name"]] = time.perf_counter() - last["at"]
    print(file=sys.stderr)
    kept = asymmetry.model()
    model = {"bias": kept.bias, "weights": kept.weights}
    if fitted:  # in smoke mode fitted and printed, never kept
        model = {"bias": fitted["bias"], "weights": fitted["weights"]}

    def sha(path: Path) -> str:
        return hashlib.sha256(path.read_bytes()).hexdigest()

    command = " ".join(shlex.quote(a) for a in ["python", *sys.argv])
    print(f"\n`{command}`\n")
    print(describe(machine()))
    print(
        f"\nTrain {len(train):,} statements ({args.train.name}), measured {result.statements:,} "
        f"({args.eval.name}): {result.positives} true/mostly-true against {result.negatives} "
        f"false/pants-fire.\n"
    )
    print("| score | AUC |")
    print("|---|---:|")
    print(f"| **A score** (the engine) | **{result.auc:.3f}** |")
    names = {
        "speaker_record": "speaker's record in the training statements (add-one)",
        "has_number": "holds a number",
        "confidence": "confidence (no hedge word)",
    }
    for key, label in names.items():
        print(f"| {label} | {result.baselines[key]:.3f} |")
    print(
        f"\nModel ({'fitted now' if args.fit else 'as kept'}): bias {model['bias']:+.3f}, "
        + ", ".join(f"{k} {v:+.3f}" for k, v in model["weights"].items())
        + f"; source prior strength {fitted.get('fitted_on', {}).get('strength', '')}"
    )
    print("\n| step | s |\n|---|---:|")
    for name, seconds in times.items():
        print(f"| {name} | {seconds:.1f} |")
    write_json(
        args.json,
        {
            "command": command,
            "auc": result.auc,
            "baselines": result.baselines,
            "statements": result.statements,
            "positives": result.positives,
            "negatives": result.negatives,
            "train": {"path": args.train.name, "sha256": sha(args.train), "statements": len(train)},
            "eval": {"path": args.eval.name, "sha256": sha(args.eval)},
            "model": {**model, "fitted_now": args.fit},
            "seconds": times,
            "machine": machine(),
        },
    )


if __name__ == "__main__":
    main()
