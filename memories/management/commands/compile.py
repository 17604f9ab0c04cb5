import json
import os
import tempfile
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from memories.compile import compiled_memory_file
from memories.errors import MemoryEngineError, NotFound
from memories.management.acting import command_error, refuse_url, resolve_agent
from memories.presenters import compiled_to_dict
from memories.selectors import workspace_by_slug
from memories.selectors.reader import Reader
from memories.serializers import CompileInput, parse
from memories.shapes import add_options, command_input


class Command(BaseCommand):
    help = (
        "Compile the memory file of a workspace (every scope) or of one agent (the scopes it "
        "sees) to stdout or, atomically, to --out FILE."
    )

    def add_arguments(self, parser):
        group = parser.add_argument_group("whose file (a workspace, or one agent)")
        group.add_argument("--workspace", help="Workspace slug: the whole workspace.")
        group.add_argument("--agent", help="With --workspace: only the scopes this agent sees.")
        group.add_argument("--token", help="An agent's token: the scopes it sees.")
        group.add_argument(
            "--url",
            help="A served engine's address (default: $MM_URL): compile the --token agent's "
            "file over its API.",
        )
        parser.add_argument("--out", help="Write the file here (write, then rename).")
        add_options(parser, CompileInput)
        parser.add_argument("--json", action="store_true", help="JSON with what was cut and why.")

    def handle(self, *args, **options):
        try:
            arguments = parse(CompileInput, command_input(CompileInput, options), from_text=True)
        except MemoryEngineError as exc:
            raise command_error(exc) from exc
        compiled = compiled_memory_file(self._whose(options), **arguments)
        text = (
            json.dumps(compiled_to_dict(compiled), indent=2, ensure_ascii=False) + "\n"
            if options["json"]
            else compiled.markdown
        )
        if options["out"]:
            write_atomically(Path(options["out"]), text)
            self.stderr.write(
                f"wrote {options['out']}: {len(compiled.included)} in, "
                f"{compiled.cut_count} cut, {compiled.tokens} of {compiled.options.budget} tokens"
            )
        else:
            self.stdout.write(text, ending="")

    def _whose(self, options) -> Reader:
        """An agent's reader, or the operator's of the whole workspace."""
        refuse_url(options)
        if options.get("token") or options.get("agent"):
            return Reader.of_agent(resolve_agent(options))
        if not options.get("workspace"):
            raise CommandError("say whose file: --workspace (with --agent), or --token")
        try:
            return Reader.of_engine(workspace_by_slug(options["workspace"]))
        except NotFound as exc:
            raise CommandError(f"--workspace: {exc.message}") from exc


def write_atomically(path: Path, text: str) -> None:
    """Readers of ``path`` see the old file or the new one, never a part of either. The new
    file keeps the old one's permissions (a new one gets the umask's)."""
    directory = path.parent
    if not directory.is_dir():
        raise CommandError(f"--out: no directory {str(directory)!r}")
    if path.is_dir():
        raise CommandError(f"--out: {str(path)!r} is a directory")
    try:
        mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    try:
        handle, temporary = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise CommandError(f"--out: cannot write in {str(directory)!r}: {exc}") from exc
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fchmod(file.fileno(), mode)
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except OSError as exc:
        Path(temporary).unlink(missing_ok=True)
        raise CommandError(f"--out: cannot write {str(path)!r}: {exc}") from exc
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
