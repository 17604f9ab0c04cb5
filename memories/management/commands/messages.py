import json
import sys

from django.core.management.base import BaseCommand, CommandError

from memories.errors import MemoryEngineError
from memories.management.acting import add_agent_arguments, command_error, resolve_agent
from memories.operations import messages_remember
from memories.presenters import bulk_results_to_dict
from memories.serializers import MessagesInput
from memories.shapes import add_options, command_input


class Command(BaseCommand):
    help = (
        "Remember a conversation as an agent (POST /api/v1/messages): a memory per message, "
        "with its speaker, session and time, each stored once. The messages are a JSON list "
        '([{"role": "user", "name": "Priya", "content": "...", "at": "..."}]) or one JSON '
        "object per line, in --file (- for standard input); prints what was stored as JSON."
    )

    def add_arguments(self, parser):
        add_options(parser, MessagesInput, exclude=("messages",))
        parser.add_argument(
            "--file", required=True, help="The messages: a JSON list, or JSON lines; - reads stdin."
        )
        add_agent_arguments(parser)

    def handle(self, *args, **options):
        agent = resolve_agent(options)
        data = command_input(MessagesInput, options)
        data["messages"] = read_messages(options["file"])
        try:
            results = messages_remember(agent=agent, arguments=data, from_text=True)
        except MemoryEngineError as exc:
            raise command_error(exc) from exc
        self.stdout.write(json.dumps(bulk_results_to_dict(results), indent=2))


def read_messages(path: str) -> list:
    """The messages of a file (or ``-``, standard input): a JSON list, or one JSON object per
    line (blank lines skipped); a CommandError naming ``--file`` and the line otherwise."""
    try:
        text = sys.stdin.read() if path == "-" else open(path, encoding="utf-8").read()  # noqa: SIM115
    except OSError as exc:
        raise CommandError(f"--file: cannot read {path!r}: {exc.strerror}") from exc
    stripped = text.strip()
    if stripped.startswith("["):
        try:
            return json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise CommandError(f"--file: not a JSON list: {exc}") from exc
    messages = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                messages.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise CommandError(f"--file: line {number} is not JSON: {exc}") from exc
    return messages
