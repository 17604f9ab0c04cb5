"""Every surface at parity (issue 38): each operation of the REST API (its OpenAPI schema) is a
method of both Python clients and of the TypeScript client (``clients/typescript``); each MCP
tool is one of those operations; the command line has the agent's everyday ones. A new
operation fails this test until every table below has it. Then the client's newer methods,
against a live engine, as an agent uses them."""

from __future__ import annotations

import asyncio
import inspect
import json
import re

import pytest
from django.core.management import get_commands
from drf_spectacular.generators import SchemaGenerator

from consolidation.models import ConsolidationRun
from consolidation.snapshots import snapshot_keep
from meaning_memory.client import AsyncMeaningMemory, MeaningMemory, NotFound, answers
from meaning_memory.mcp import engine_tools
from meaning_memory.testing import make_actor
from meaning_memory.tests.served import ROOT
from memories.compile import compiled_memory_file
from memories.selectors.reader import Reader

#: The one list of agent operations: each OpenAPI operation, the Python clients' method, the
#: MCP tool (None: not a tool), the command (None: not a command of its own) and the TypeScript
#: client's method.
OPERATIONS = {
    "memories_create": ("remember", "mm_remember", "remember", "remember"),
    "memories_bulk_create": ("bulk_remember", "mm_bulk_remember", "seed", "bulkRemember"),
    "search_create": ("search", "mm_search", "search", "search"),
    "memories_retrieve": ("get", None, None, "get"),
    "memories_list": ("list", "mm_list", "list", "list"),
    "memories_feedback_create": ("feedback", "mm_feedback", "feedback", "feedback"),
    "memories_forget_create": ("forget", "mm_forget", "forget", "forget"),
    "memories_erase_create": ("erase", "mm_erase", "erase", "erase"),
    "memories_erase_chosen": ("erase_matching", None, "erase", "eraseMatching"),
    "messages_remember": (
        "remember_messages",
        "mm_remember_messages",
        "messages",
        "rememberMessages",
    ),
    "memories_links_create": ("link", "mm_link", "link", "link"),
    "memories_links_remove_create": ("unlink", None, "link", "unlink"),
    "compiled_retrieve": ("compiled", "mm_compile", "compile", "compiled"),
    "compiled_kept_retrieve": ("compiled_kept", None, None, "compiledKept"),
    "consolidate_create": ("consolidate", "mm_consolidate", "consolidate", "consolidate"),
    "consolidate_retrieve": ("consolidation_run", None, None, "consolidationRun"),
    "saga_create": ("saga", "mm_saga", None, "saga"),
    "entities_list": ("entities", None, "entities", "entities"),
    "entities_create": ("declare_entity", None, "entities", "declareEntity"),
    "entities_retrieve": ("entity", None, None, "entity"),
    "sources_list": ("sources", None, None, "sources"),
    "sources_detail": ("source", None, None, "source"),
    "traverse_create": ("traverse", "mm_traverse_relationships", None, "traverse"),
    "explain_path_create": ("explain_path", "mm_explain_path", None, "explainPath"),
    "divergences_list": ("divergences", "mm_divergences", "divergence", "divergences"),
    "divergences_retrieve": ("divergence", None, None, "divergence"),
    "readiness_retrieve": ("readiness", "mm_stare_readiness", "readiness", "readiness"),
    "readiness_history_retrieve": ("readiness_history", None, None, "readinessHistory"),
}

#: The TypeScript client's class (its built package is checked too, by
#: ``test_typescript_client``, where Node is installed).
TYPESCRIPT_CLIENT = ROOT / "clients" / "typescript" / "src" / "client.ts"


def typescript_methods() -> set[str]:
    """The public methods of the TypeScript client's ``MeaningMemory`` class, read from its
    source: each ``  name(`` (or ``async``, ``async *``) at the class's indentation."""
    source = TYPESCRIPT_CLIENT.read_text()
    body = source[source.index("export class MeaningMemory") :]
    return set(re.findall(r"^  (?:async \*?)?([a-z]\w*)\(", body, flags=re.MULTILINE))


def test_every_operation_is_in_the_list_and_on_every_surface_it_names():
    schema = SchemaGenerator().get_schema(request=None, public=True)
    operations = {
        operation["operationId"] for path in schema["paths"].values() for operation in path.values()
    }
    tools = {tool.name for tool in engine_tools()}
    commands = set(get_commands())
    typescript = typescript_methods()

    assert operations == set(OPERATIONS)
    for operation, (method, tool, command, ts_method) in OPERATIONS.items():
        for client in (MeaningMemory, AsyncMeaningMemory):
            assert callable(getattr(client, method, None)), (client, method)
        assert inspect.iscoroutinefunction(getattr(AsyncMeaningMemory, method)), method
        assert tool is None or tool in tools, (operation, tool)
        assert command is None or command in commands, (operation, command)
        assert ts_method in typescript, (operation, ts_method, TYPESCRIPT_CLIENT)
    assert tools == {tool for _, tool, _, _ in OPERATIONS.values() if tool}


@pytest.fixture
def alice(transactional_db):
    return make_actor("acme", "alice", scopes=["team:accounts"])


def test_the_newer_methods_work_against_a_live_engine(served, alice, settings):
    with MeaningMemory(served, alice.token) as mm:
        first = mm.remember(
            "Zephyr Logistics renews in March.", scope="team:accounts", source="crm"
        )
        second = mm.remember("Zephyr Logistics asked for a discount.", scope="team:accounts")
        # Each answer the schema's model of it (meaning_memory.client.answers).
        declared = mm.declare_entity("Zephyr Logistics", "customer", aliases=["ZL"])
        assert isinstance(declared, answers.Entity) and declared.aliases == ["ZL"]
        assert declared.name == "Zephyr Logistics" and declared.declared
        found = mm.entities(query="zephyr")
        assert isinstance(found, answers.EntityPage)
        assert [e.name for e in found.results] == ["Zephyr Logistics"]
        assert mm.entity(declared.entity_id).entity.entity_id == declared.entity_id
        link = mm.link(first.mem_id, to=second.mem_id, type="relates_to")
        assert isinstance(link, answers.StoredLink) and link.from_ == first.mem_id
        removed = mm.unlink(first.mem_id, link.link_id, reason="not related after all")
        assert removed.link_id == link.link_id and removed.removed_at is not None
        sources = mm.sources()
        assert isinstance(sources, answers.SourcePage)
        assert "crm" in json.dumps(sources.model_dump(mode="json"))
        run = mm.consolidate(dry_run=True)
        assert isinstance(run, answers.Run) and run.dry_run
        assert mm.consolidation_run(run.run_id).run_id == run.run_id
        with pytest.raises(NotFound):
            mm.compiled_kept()  # no run has kept one yet
        compiled = compiled_memory_file(Reader.of_agent(alice.agent))
        snapshot_keep(agent=alice.agent, compiled=compiled, run=ConsolidationRun.objects.get())
        kept = mm.compiled_kept()  # Markdown, as the run's compile phase kept it
        assert kept == compiled.markdown and "Zephyr Logistics renews in March." in kept

    async def through_async():
        async with AsyncMeaningMemory(served, alice.token) as mm:
            return await mm.entities(query="zephyr")

    assert asyncio.run(through_async()).results[0].name == "Zephyr Logistics"
