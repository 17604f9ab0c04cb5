"""The agent commands against a served engine: ``meaning-memory remember … --url URL --token T``
(or ``MM_URL`` and ``MM_TOKEN``) sends each over the REST API with the Python client
(``meaning_memory.client``) instead of reaching a database.

The commands are the same ones, with the same options (each command's own parser), checked
here first by the same input shapes, so a bad option is refused before anything is sent and
named as it is without ``--url``. What they print is the engine's answer: JSON where the
command prints JSON, the same lines where it prints lines. Who acts is the token's agent only
(``--workspace`` / ``--agent`` name an agent of a database at hand).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from datetime import date, datetime
from pathlib import Path
from typing import Any

#: The commands that may talk to a served engine.
REMOTE_COMMANDS = ("remember", "search", "list", "feedback", "forget", "compile", "messages")


def remote_target(argv: list[str]) -> tuple[str | None, list[str]]:
    """The served engine's URL (``--url URL``, ``--url=URL`` or ``MM_URL``; None: work on the
    local database) and the arguments without the option."""
    rest, url, given = [], None, iter(argv)
    for argument in given:
        if argument == "--url":
            url = next(given, "")
        elif argument.startswith("--url="):
            url = argument.split("=", 1)[1]
        else:
            rest.append(argument)
    if url is None:
        url = os.environ.get("MM_URL") or None
    return url, rest


def run(name: str, argv: list[str], url: str) -> int:
    """Run the agent command ``name`` with ``argv`` (its arguments) against ``url``; the exit
    status (0, 1 for an error the engine answered or a network failure, 2 for bad usage)."""
    import django

    django.setup()
    import httpx
    from django.core.management import CommandError, load_command_class

    from meaning_memory.client import MeaningMemory, MeaningMemoryError

    command = load_command_class("memories", name)
    command._called_from_command_line = True  # a usage error prints and exits 2, as Django's
    parser = command.create_parser("meaning-memory", name)
    options = vars(parser.parse_args(argv))
    if options.get("workspace") or options.get("agent"):
        parser.error("with --url the agent is the token's: give --token (or $MM_TOKEN)")
    if not url.strip():
        parser.error("--url: give the served engine's address, e.g. http://127.0.0.1:8000")
    token = (options.get("token") or os.environ.get("MM_TOKEN") or "").strip()
    if not token:
        parser.error("with --url say who acts: --token (or $MM_TOKEN)")
    try:
        with MeaningMemory(url, token) as client:
            output = HANDLERS[name](client, options)
    except MeaningMemoryError as exc:
        sys.stderr.write(f"Error: {_error_text(exc)}\n")
        return 1
    except (httpx.TransportError, httpx.InvalidURL, httpx.UnsupportedProtocol) as exc:
        sys.stderr.write(f"Error: cannot reach {url}: {exc}\n")
        return 1
    except (_Refused, CommandError) as exc:
        sys.stderr.write(f"Error: {exc}\n")
        return 1
    sys.stdout.write(output)
    return 0


class _Refused(Exception):
    """Input the shapes refused before anything was sent."""


def _error_text(exc: Any) -> str:
    """An error the engine answered, or the shapes raised, worded as the command words it
    without ``--url`` (``memories.management.acting.command_error``)."""
    from memories.errors import ValidationFailed
    from memories.management.acting import command_error

    errors = getattr(exc, "errors", None) or {}
    if errors:
        return str(command_error(ValidationFailed(errors)))
    return str(getattr(exc, "detail", None) or exc)


def _checked(serializer_class: Any, options: dict[str, Any], **more: Any) -> dict[str, Any]:
    """The options as the shape checks them (from text), as JSON values for the API."""
    from memories.errors import ValidationFailed
    from memories.serializers import parse
    from memories.shapes import command_input

    data = {**command_input(serializer_class, options), **more}
    try:
        values = parse(serializer_class, data, from_text=True)
    except ValidationFailed as exc:
        raise _Refused(_error_text(exc)) from None
    return {name: _json(value) for name, value in values.items() if value is not None}


def _json(value: Any) -> Any:
    from memories import metadata_filter

    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, metadata_filter.Condition | metadata_filter.Combined):
        return metadata_filter.as_json(value)
    if isinstance(value, list | tuple):
        return [_json(item) for item in value]
    if isinstance(value, dict):
        return {key: _json(item) for key, item in value.items()}
    return value


def _text_options(serializer_class: Any, options: dict[str, Any]) -> dict[str, Any]:
    """The options as text, for a query string the engine parses as text."""
    from memories.shapes import command_input

    return {
        name: json.dumps(value) if isinstance(value, dict | list) else value
        for name, value in command_input(serializer_class, options).items()
    }


def _dump(answer: Any) -> str:
    data = answer.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return json.dumps(data, indent=2, ensure_ascii=False)


def _remember(client: Any, options: dict[str, Any]) -> str:
    from memories.serializers import RememberInput

    body = _checked(RememberInput, options)
    return _dump(client.remember(body.pop("text"), **body))


def _search(client: Any, options: dict[str, Any]) -> str:
    from memories.serializers import SearchInput

    body = _checked(SearchInput, options)
    found = client.search(body.pop("query"), **body)
    if options["json"]:
        return json.dumps({"results": _dump_list(found.results)}, indent=2, ensure_ascii=False)
    return found.table


def _dump_list(items: list[Any]) -> list[Any]:
    return [item.model_dump(mode="json", by_alias=True, exclude_unset=True) for item in items]


def _list(client: Any, options: dict[str, Any]) -> str:
    """A page (``--page``, ``--page-size``) of the list, following the API's cursor links."""
    from memories.serializers import MemoryPageInput

    filters = _text_options(MemoryPageInput, options)
    number = int(filters.pop("page", 1) or 1)
    filters["limit"] = filters.pop("page_size", 20)
    page = client.list(**filters)
    for _ in range(number - 1):
        if not page.next:
            break
        page = client.list(cursor=page.next)
    found = _dump_list(page.results)
    more = bool(page.next)
    if options["json"]:
        body = {"page": number, "page_size": int(filters["limit"]), "more": more}
        return json.dumps({**body, "results": found}, indent=2, ensure_ascii=False)
    lines = [
        f"{m['mem_id']} ({m['category']}, {m['significance']:.2f}): {m['text'][:100]}"
        for m in found
    ]
    if more:
        lines.append(f"(more: --page {number + 1})")
    return "".join(line + "\n" for line in lines)


def _feedback(client: Any, options: dict[str, Any]) -> str:
    from memories.serializers import FeedbackInput

    body = _checked(FeedbackInput, options)
    memory = client.feedback(options["mem_id"], body["action"], body["reason"])
    if options["json"]:
        return _dump(memory)
    pinned = ", pinned" if memory.pinned else ""
    return (
        f"{memory.mem_id}: {body['action']} (significance {memory.significance:.2f}, "
        f"{memory.status}{pinned})\n"
    )


def _forget(client: Any, options: dict[str, Any]) -> str:
    from memories.serializers import ForgetInput

    memory = client.forget(options["mem_id"], _checked(ForgetInput, options)["reason"])
    return f"{memory.mem_id}: forgotten\n"


def _compile(client: Any, options: dict[str, Any]) -> str:
    from memories.management.commands.compile import write_atomically
    from memories.serializers import CompileInput

    _checked(CompileInput, options)  # refused here as without --url
    compiled = client.compiled(**_text_options(CompileInput, options))
    text = _dump(compiled) + "\n" if options["json"] else compiled.markdown
    if not options.get("out"):
        return text
    write_atomically(Path(options["out"]), text)
    sys.stderr.write(f"wrote {options['out']}: {compiled.tokens} tokens\n")
    return ""


def _messages(client: Any, options: dict[str, Any]) -> str:
    from memories.management.commands.messages import read_messages
    from memories.serializers import MessagesInput

    body = _checked(MessagesInput, options, messages=read_messages(options["file"]))
    return _dump(client.remember_messages(body.pop("session"), body.pop("messages"), **body))


HANDLERS: dict[str, Callable[[Any, dict[str, Any]], str]] = {
    "remember": _remember,
    "search": _search,
    "list": _list,
    "feedback": _feedback,
    "forget": _forget,
    "compile": _compile,
    "messages": _messages,
}
