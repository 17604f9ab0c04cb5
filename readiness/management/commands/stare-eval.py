from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from readiness.checks import run_checks


class Command(BaseCommand):
    help = (
        "Run the readiness checks that can run here and record their evidence: the synthetic "
        "ones always, the gated evaluations when --locomo (LoCoMo conversations) or --pairs "
        "(labelled contradiction pairs, ProSeCCo's shape) gives their data."
    )

    def add_arguments(self, parser):
        parser.add_argument("--locomo", type=Path, help="A LoCoMo file (locomo10.json shape).")
        parser.add_argument(
            "--pairs", type=Path, help="Contradiction pairs (ProSeCCo's JSON-lines shape)."
        )
        parser.add_argument(
            "--conversations", type=int, help="Use only the first N conversations of it."
        )

    def handle(self, *args, **options):
        path = options["locomo"]
        if path is not None and not path.is_file():
            raise CommandError(f"--locomo: no file {str(path)!r}")
        pairs = options["pairs"]
        if pairs is not None and not pairs.is_file():
            raise CommandError(f"--pairs: no file {str(pairs)!r}")
        if options["conversations"] is not None and options["conversations"] < 1:
            raise CommandError("--conversations: must be at least 1")
        recorded = run_checks(path, options["conversations"], say=self.stdout.write, pairs=pairs)
        passed = sum(1 for e in recorded if e.passed)
        self.stdout.write(f"recorded {len(recorded)} check runs: {passed} passed")
