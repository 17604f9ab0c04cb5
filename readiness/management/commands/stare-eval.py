from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from readiness.checks import run_checks


class Command(BaseCommand):
    help = (
        "Run the readiness checks that can run here and record their evidence: the synthetic "
        "ones always, the gated evaluations when --locomo (LoCoMo conversations), --pairs "
        "(labelled contradiction pairs, ProSeCCo's shape), --liar-train with --liar-eval "
        "(fact-checked statements, LIAR's shape), --corrections (claim pairs, VitaminC's "
        "shape), --dialogue (a folder of dialogues, the Schema-Guided Dialogue shape; never its "
        "test split), --ner (sentences with named entities, CoNLL-2003's shape) or "
        "--held-out-conversations (LoCoMo-shaped conversations for the learned ranking's gain "
        "alone) gives their data. "
        "Any file of the shape will do; each run records the files' sha256 and size, and says "
        "which checks it could not run and why."
    )

    def add_arguments(self, parser):
        parser.add_argument("--locomo", type=Path, help="A LoCoMo file (locomo10.json shape).")
        parser.add_argument(
            "--pairs", type=Path, help="Contradiction pairs (ProSeCCo's JSON-lines shape)."
        )
        parser.add_argument(
            "--conversations", type=int, help="Use only the first N conversations of it."
        )
        parser.add_argument(
            "--liar-train",
            type=Path,
            help="LIAR-shaped statements whose verdicts make the speakers' records.",
        )
        parser.add_argument(
            "--liar-eval",
            type=Path,
            help="LIAR-shaped statements the A score is measured on (with --liar-train).",
        )
        parser.add_argument(
            "--corrections", type=Path, help="Claim pairs (VitaminC's JSON-lines shape)."
        )
        parser.add_argument(
            "--ner", type=Path, help="Sentences with named entities (CoNLL-2003's shape)."
        )
        parser.add_argument(
            "--held-out-conversations",
            type=Path,
            help="LoCoMo-shaped conversations that only the learned ranking's gain is measured "
            "on (others than --locomo's; never a split kept for outside checks).",
        )
        parser.add_argument(
            "--dialogue",
            type=Path,
            help="A folder of dialogues (the Schema-Guided Dialogue shape), e.g. its dev split.",
        )

    def handle(self, *args, **options):
        path = options["locomo"]
        if path is not None and not path.is_file():
            raise CommandError(f"--locomo: no file {str(path)!r}")
        pairs = options["pairs"]
        for name in ("pairs", "corrections", "ner", "held_out_conversations"):
            given = options[name]
            if given is not None and not given.is_file():
                flag = "--" + name.replace("_", "-")
                raise CommandError(f"{flag}: no file {str(given)!r}")
        dialogue = options["dialogue"]
        if dialogue is not None and not dialogue.exists():
            raise CommandError(f"--dialogue: no folder or file {str(dialogue)!r}")
        if dialogue is not None and "test" in dialogue.resolve().parts:
            raise CommandError("--dialogue: the test split is kept apart and never read here")
        held_out = options["held_out_conversations"]
        if held_out is not None and "test" in held_out.resolve().parts:
            raise CommandError(
                "--held-out-conversations: the test split is kept apart and never read here"
            )
        if options["conversations"] is not None and options["conversations"] < 1:
            raise CommandError("--conversations: must be at least 1")
        liar = None
        if options["liar_train"] or options["liar_eval"]:
            for name in ("liar_train", "liar_eval"):
                given = options[name]
                flag = "--" + name.replace("_", "-")
                if given is None:
                    raise CommandError(f"{flag}: needed with the other --liar-* option")
                if not given.is_file():
                    raise CommandError(f"{flag}: no file {str(given)!r}")
            liar = (options["liar_train"], options["liar_eval"])
        recorded = run_checks(
            path,
            options["conversations"],
            say=self.stdout.write,
            pairs=pairs,
            liar=liar,
            corrections=options["corrections"],
            ner=options["ner"],
            dialogue=dialogue,
            held_out=held_out,
        )
        passed = sum(1 for e in recorded if e.passed)
        self.stdout.write(f"recorded {len(recorded)} check runs: {passed} passed")
