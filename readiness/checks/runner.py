"""``run_checks``: every check that can run here, each result recorded under one evaluation
run, with the checks that could not run and why."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.utils import timezone

from readiness.checks.conversations import learned_checks, locomo_checks
from readiness.checks.gated import (
    NotMeasurable,
    corrections_checks,
    dialogue_checks,
    liar_checks,
    ner_checks,
    pairs_checks,
)
from readiness.checks.sandbox import Result, _sandboxed
from readiness.checks.synthetic import SYNTHETIC
from readiness.evidence import engine_version, record
from readiness.models import EvaluationRun
from readiness.registry import Capability, Check, all_checks

#: What each kind of outside data is and the options that give it.
NEEDS = {
    "locomo": "--locomo FILE (LoCoMo-shaped conversations)",
    "pairs": "--pairs FILE (labelled contradiction pairs, ProSeCCo's shape)",
    "liar": "--liar-train FILE --liar-eval FILE (LIAR-shaped fact-checked statements)",
    "corrections": "--corrections FILE (VitaminC-shaped claim pairs)",
    "dialogue": "--dialogue DIR (dialogues in the Schema-Guided Dialogue shape; never its test/)",
    "ner": "--ner FILE (CoNLL-2003-shaped sentences with named entities)",
    "held_out": "--held-out-conversations FILE (LoCoMo-shaped conversations the learned "
    "ranking's model was not fitted on)",
}


#: The checks each kind of data given runs, where it is not every check of its ``needs``.


def _checks_of(given: str) -> list[str]:
    """The checks that data given as ``given`` (a ``NEEDS`` key) runs."""
    return [c.id for _, c in all_checks() if c.needs == given]


def _failed(exc: Exception, needs: str) -> dict[str, Result]:
    """Every gated check on that data, failed to run with this error."""
    error = {"error": f"{type(exc).__name__}: {exc}"}
    return dict.fromkeys(_checks_of(needs), (None, error))


def describe(path: Path) -> dict[str, Any]:
    """A data file as its runs record it: name, sha256 and size in bytes."""
    data = path.read_bytes()
    return {"file": path.name, "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def describe_dialogues(path: Path) -> dict[str, Any]:
    """A folder of dialogue files as its runs record it: its name, one sha256 over its files
    (each name, a NUL, its bytes; in name order) and their size."""
    from readiness.dialogue import files

    digest, size = hashlib.sha256(), 0
    try:
        found = files(path)
    except ValueError:
        found = []
    for file in found:
        data = file.read_bytes()
        digest.update(file.name.encode() + b"\0" + data)
        size += len(data)
    return {"file": path.name, "sha256": digest.hexdigest(), "bytes": size}


def _record_gated(
    data: dict[str, Any],
    results: dict[str, Result],
    say: Callable[[str], None],
    more: dict[str, Any],
    what: str,
    run: EvaluationRun,
) -> list[Any]:
    """Record each gated result with its dataset's name, sha256 and size (and ``more`` in
    its detail)."""
    by_id = {check.id: (c, check) for c, check in all_checks()}
    recorded = []
    for check_id, (value, detail) in results.items():
        capability, check = by_id[check_id]
        recorded.append(
            record(
                capability,
                check,
                value,
                dataset=data["file"],
                dataset_sha256=data["sha256"],
                dataset_bytes=data["bytes"],
                detail={**detail, **more},
                run=run,
            )
        )
        shown = value if value is None else round(value, 3)
        say(f"{check_id}: {shown} (threshold {check.threshold}, {what})")
    return recorded


def run_checks(
    locomo: Path | None = None,
    conversations: int | None = None,
    say: Callable[[str], None] = lambda line: None,
    pairs: Path | None = None,
    liar: tuple[Path, Path] | None = None,
    corrections: Path | None = None,
    ner: Path | None = None,
    dialogue: Path | None = None,
    held_out: Path | None = None,
) -> list[Any]:
    """Run every check that can run (synthetic always; gated ones with their data: ``locomo``,
    ``pairs``, ``liar`` as training and measured statements, ``corrections``, ``ner``,
    ``dialogue``; ``held_out``: LoCoMo-shaped conversations that only the learned ranking's
    gain is measured on) and record each result under one evaluation run, with the checks that
    could not run and why. Returns the evidence rows."""
    run = EvaluationRun.objects.create(engine_version=engine_version())
    recorded = []
    not_run: dict[str, str] = {}
    by_id: dict[str, tuple[Capability, Check]] = {check.id: (c, check) for c, check in all_checks()}
    for check_id, synthetic in SYNTHETIC.items():
        try:
            value, detail = _sandboxed(synthetic)
        except Exception as exc:  # a check that cannot run has failed: recorded as such
            value, detail = None, {"error": f"{type(exc).__name__}: {exc}"}
        capability, check = by_id[check_id]
        recorded.append(
            record(capability, check, value, dataset="synthetic", detail=detail, run=run)
        )
        shown = value if value is None else round(value, 3)
        say(f"{check_id}: {shown} (threshold {check.threshold})")
    given: dict[str, tuple[dict[str, Any], Callable[[], dict[str, Result]], str]] = {}
    if locomo is not None:
        given["locomo"] = (
            describe(locomo),
            lambda: locomo_checks(locomo, conversations),
            "{conversations} conversations",
        )
    if pairs is not None:
        given["pairs"] = (describe(pairs), lambda: pairs_checks(pairs), "pairs file")
    if liar is not None:
        train, measured = liar
        given["liar"] = (
            {**describe(measured), "train": describe(train)},
            lambda: liar_checks(train, measured),
            "statements file",
        )
    if corrections is not None:
        given["corrections"] = (
            describe(corrections),
            lambda: corrections_checks(corrections),
            "pairs file, held-out part",
        )
    if ner is not None:
        given["ner"] = (describe(ner), lambda: ner_checks(ner), "sentences file")
    if dialogue is not None:
        given["dialogue"] = (
            describe_dialogues(dialogue),
            lambda: dialogue_checks(dialogue),
            "dialogues",
        )
    if held_out is not None:
        given["held_out"] = (
            describe(held_out),
            lambda: learned_checks(held_out),
            "{conversations} conversations its model was not fitted on",
        )
    done: set[str] = set()
    for needs, (data, measure, what) in given.items():
        try:
            results = measure()
        except NotMeasurable as exc:
            results = {"_not_run": (None, dict.fromkeys(_checks_of(needs), str(exc)))}
        except Exception as exc:  # the checks failed to run: recorded as failed
            results = _failed(exc, needs)
        count = results.pop("_conversations", (0, {}))[0]
        not_run |= results.pop("_not_run", (None, {}))[1]
        more = {"conversations": count} if needs in ("locomo", "held_out") else {}
        recorded += _record_gated(data, results, say, more, what.format(conversations=count), run)
        done |= set(results)
    for _, check in all_checks():
        if check.kind == "gated-eval" and check.needs not in given and check.id not in done:
            not_run[check.id] = f"needs {NEEDS[check.needs]}"
    # A check one kind of data measured is not "not run" because another could not measure it.
    not_run = {check_id: why for check_id, why in not_run.items() if check_id not in done}
    for check_id, why in not_run.items():
        say(f"{check_id}: not run: {why}")
    run.datasets = {needs: data for needs, (data, _, _) in given.items()}
    run.not_run = not_run
    run.finished_at = timezone.now()
    run.save(update_fields=["datasets", "not_run", "finished_at"])
    return recorded
