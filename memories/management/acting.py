"""Shared by the commands: who is acting (as an agent), the workspace acted on, and error
translation."""

from __future__ import annotations

import os
from argparse import ArgumentParser
from typing import Any

from django.core.management.base import CommandError

from memories.errors import MemoryEngineError, ValidationFailed
from memories.models import Agent, Workspace
from memories.selectors import agent_by_name
from memories.serializers import parse
from memories.services import agent_authenticate
from memories.shapes import command_input


def add_agent_arguments(parser: ArgumentParser) -> None:
    group = parser.add_argument_group("acting agent (a token, or workspace + agent name)")
    group.add_argument(
        "--token",
        default=os.environ.get("MM_TOKEN", ""),
        help="The agent's API token (default: $MM_TOKEN).",
    )
    group.add_argument("--workspace", help="Workspace slug, with --agent.")
    group.add_argument("--agent", help="Agent name in --workspace.")
    group.add_argument(
        "--url",
        help="A served engine's address (default: $MM_URL): send the command over its API as "
        "the agent of --token, instead of reaching a database (meaning_memory.remote).",
    )


def resolve_agent(options: dict) -> Agent:
    refuse_url(options)
    if options.get("workspace") and options.get("agent"):
        agent = agent_by_name(workspace_slug=options["workspace"], name=options["agent"])
        if agent is None:
            raise CommandError(
                f"no active agent {options['agent']!r} in workspace {options['workspace']!r}"
            )
        return agent
    if options.get("token"):
        agent = agent_authenticate(options["token"])
        if agent is None:
            raise CommandError("--token: invalid or revoked token")
        return agent
    raise CommandError("say who acts: --token (or $MM_TOKEN), or --workspace and --agent")


def refuse_url(options: dict) -> None:
    """``--url`` reaches this command only where nothing sends it to a served engine (``python
    manage.py``): say so rather than act on the local database."""
    if options.get("url"):
        raise CommandError("--url: run the command as `meaning-memory <command> --url …`")


def command_error(exc: MemoryEngineError) -> CommandError:
    if isinstance(exc, ValidationFailed):
        lines = [f"{field}: {' '.join(messages)}" for field, messages in exc.errors.items()]
        return CommandError("invalid input:\n  " + "\n  ".join(lines))
    return CommandError(exc.message)


def workspace_option(slug: str) -> Workspace:
    """The workspace ``--workspace`` names (a CommandError naming the option otherwise)."""
    workspace = Workspace.objects.filter(slug=slug).first()
    if workspace is None:
        raise CommandError(f"--workspace: no workspace {slug!r}")
    return workspace


def parsed_options(serializer_class: Any, options: dict) -> dict[str, Any]:
    """The command's options as the serializer reads them from text (``shapes``), validated;
    a CommandError naming each field and rule otherwise."""
    try:
        return parse(serializer_class, command_input(serializer_class, options), from_text=True)
    except MemoryEngineError as exc:
        raise command_error(exc) from exc
