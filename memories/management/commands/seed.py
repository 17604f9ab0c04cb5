import json
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django_q.tasks import async_task

from memories.commands import Remember
from memories.errors import MemoryEngineError, ValidationFailed
from memories.management.acting import add_agent_arguments, resolve_agent
from memories.serializers import RememberInput, parse
from memories.services import announce_import, bulk_prepare, bulk_store

LIST_MARKERS = ("- ", "* ", "+ ")
MAX_ERRORS_SHOWN = 20


class Command(BaseCommand):
    help = (
        "Import memories from a file, one per line: JSON Lines (each line the remember "
        "arguments) or a markdown list ('- text'; headings and blank lines are skipped). The "
        "whole file is checked first and nothing is stored if a line is bad; then it is stored "
        "in batches, each memory once (running it again stores nothing new)."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        add_agent_arguments(parser)
        parser.add_argument("--format", choices=("jsonl", "markdown"), help="Default: by suffix.")
        parser.add_argument("--source", help="Source of memories that do not name one.")
        parser.add_argument("--category", help="Category of memories that do not name one.")
        parser.add_argument("--scope", help="Scope of memories that do not name one.")
        parser.add_argument("--batch", type=int, default=256, help="Memories per batch.")

    def handle(self, *args, **options):
        agent = resolve_agent(options)
        path: Path = options["file"]
        if not path.is_file():
            raise CommandError(f"no file {str(path)!r}")
        if options["batch"] < 1:
            raise CommandError("--batch: must be at least 1")
        kind = options["format"] or (
            "jsonl" if path.suffix in (".jsonl", ".ndjson") else "markdown"
        )
        defaults = {
            name: options[name] for name in ("source", "category", "scope") if options[name]
        }
        lines, items = read_items(path, kind, defaults)
        try:
            prepared = bulk_prepare(
                agent=agent, commands=[Remember.from_values(item) for item in items]
            )
        except ValidationFailed as exc:
            raise CommandError(_by_line(exc, lines)) from exc
        started, done, stored = time.monotonic(), 0, 0
        for first in range(0, len(prepared), options["batch"]):
            chunk = prepared[first : first + options["batch"]]
            try:
                results = bulk_store(agent=agent, prepared=chunk, first_index=first)
            except ValidationFailed as exc:
                raise CommandError(
                    f"stopped at line {lines[first]} with {stored:,} memories stored before it "
                    f"(run again to go on):\n" + _by_line(exc, lines)
                ) from exc
            except MemoryEngineError as exc:
                raise CommandError(
                    f"stopped at line {lines[first]} with {stored:,} memories stored before it "
                    f"(run again to go on): {exc.message}"
                ) from exc
            done += len(chunk)
            stored += sum(1 for r in results if r.status == "stored")
            self._progress(done, len(prepared), stored, started)
        seconds = time.monotonic() - started
        if stored:
            # The worker links whatever this import left without entities (written with
            # MM_ENTITY_EXTRACTION off, say): nothing, when extraction ran with the writes.
            async_task("memories.tasks.link_workspace", agent.workspace_id)
            announce_import(agent.workspace_id, stored)
        self.stderr.write(
            f"seed: {len(prepared):,} memories: {stored:,} stored, {len(prepared) - stored:,} "
            f"already there, in {seconds:.1f} s"
        )

    def _progress(self, done: int, total: int, stored: int, started: float) -> None:
        rate = done / max(time.monotonic() - started, 1e-9)
        line = f"seed: {done:,}/{total:,} ({stored:,} stored, {rate:,.0f}/s)"
        if self.stderr.isatty():  # one line, rewritten
            self.stderr.write("\r" + line, ending="" if done < total else "\n")
        else:
            self.stderr.write(line)


def read_items(path: Path, kind: str, defaults: dict[str, str]) -> tuple[list[int], list[dict]]:
    """The file's memories with their line numbers; CommandError naming every bad line."""
    lines, items, errors = [], [], []
    try:
        content = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise CommandError(f"{path}: not UTF-8 text ({exc})") from exc
    for number, raw in enumerate(content.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if kind == "jsonl":
            try:
                item = json.loads(line)
            except json.JSONDecodeError as exc:
                errors.append(f"line {number}: not valid JSON ({exc.msg})")
                continue
            if not isinstance(item, dict):
                errors.append(f"line {number}: must be a JSON object")
                continue
        else:
            if line.startswith("#"):
                continue
            if not line.startswith(LIST_MARKERS):
                errors.append(f"line {number}: not a list item ('- text')")
                continue
            item = {"text": line[2:].strip()}
        try:
            items.append(parse(RememberInput, {**defaults, **item}))
            lines.append(number)
        except ValidationFailed as exc:
            errors += [f"line {number}: {f}: {' '.join(m)}" for f, m in exc.errors.items()]
    if errors:
        raise CommandError(_summary(errors))
    if not items:
        raise CommandError(f"{path}: no memories in it")
    return lines, items


def _by_line(exc: ValidationFailed, lines: list[int]) -> str:
    errors = []
    for field, messages in exc.errors.items():
        if field.startswith("memories["):
            index, _, rest = field.removeprefix("memories[").partition("].")
            errors.append(f"line {lines[int(index)]}: {rest}: {' '.join(messages)}")
        else:
            errors.append(f"{field}: {' '.join(messages)}")
    return _summary(errors)


def _summary(errors: list[str]) -> str:
    shown = errors[:MAX_ERRORS_SHOWN]
    more = len(errors) - len(shown)
    return (
        "nothing stored; fix these lines:\n  "
        + "\n  ".join(shown)
        + (f"\n  … and {more} more" if more else "")
    )
