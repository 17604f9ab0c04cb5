"""The compiled file: the longest head of the order that fits the budget, rendered."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from memories.compile.groups import (
    OTHER,
    category_group,
    entity_groups,
    heading_of,
    sections_of,
)
from memories.compile.options import CompileOptions, compile_options
from memories.compile.render import (
    OPEN_THREADS,
    header,
    render_line,
    render_thread,
    section_heading,
)
from memories.compile.selection import Candidates, candidates_of
from memories.models import STARE_DIMENSIONS, Memory, Thread, ThreadMember
from memories.reading import reader as database
from memories.selectors.reader import Reader
from memories.tokens import count_tokens

#: How many cut memories a compile lists by name (all are counted).
CUT_LIST_MAX = 100
#: Memories whose text is read and measured at a time while filling the budget.
CHUNK = 256


@dataclass(frozen=True)
class CompiledEntry:
    mem_id: str
    category: str
    significance: float
    weight: float
    protected: bool
    tokens: int | None = None  # of its line, for an included memory
    reason: str = ""  # for a cut memory


@dataclass(frozen=True)
class CompiledFile:
    markdown: str
    tokens: int
    as_of: datetime
    options: CompileOptions
    candidates: int
    included: list[CompiledEntry]
    cut: list[CompiledEntry]  # the first CUT_LIST_MAX cut, in order
    cut_count: int
    cut_protected: int
    #: The open threads listed (``thread_id``), when Open Threads is on.
    threads: list[str] = field(default_factory=list)
    #: The pks of the memories whose words the file may hold: those it lists and the members
    #: of the threads it lists (a thread's title and cue come from them). What an erasure reads
    #: to drop a kept file (``consolidation.snapshots``).
    memory_pks: list[int] = field(default_factory=list)


@dataclass
class _Line:
    index: int  # position in the candidates' order
    mem_id: str
    category: str
    text: str
    tokens: int
    #: Its section: its category, or the entity it is filed under (``memories.compile.groups``).
    group: str = ""


CUT_REASON = "budget: the memories before it in the order filled the file"
TOO_LONG_REASON = "budget: its line alone is longer than the room the header leaves"
CUT_PROTECTED_REASON = (
    "budget: the protected memories alone overflow it, and those before it filled the file"
)


def compiled_memory_file(
    reader: Reader,
    *,
    as_of: datetime | None = None,
    options: CompileOptions | None = None,
) -> CompiledFile:
    """The compiled memory file of what ``reader`` sees: an agent's (the scopes it sees), or
    the whole workspace's. Same memories, options and ``as_of`` give the same bytes."""
    options = options or compile_options()
    as_of = as_of or timezone.now()
    workspace, agent, scope_ids = reader.workspace, reader.agent, reader.scope_list
    title = workspace.slug if agent is None else f"{workspace.slug} (agent {agent.name})"
    with _snapshot():
        candidates = candidates_of(workspace.pk, scope_ids, as_of, options.decay, options.metadata)
        threads, section = open_threads_section(workspace.pk, scope_ids, as_of, options)
        lines, too_long, markdown, tokens = _selected(
            candidates, title=title, as_of=as_of, options=options, threads=section
        )
        compiled = _compiled(
            candidates,
            lines,
            too_long,
            markdown=markdown,
            tokens=tokens,
            as_of=as_of,
            options=options,
        )
        compiled.threads.extend(threads)
        compiled.memory_pks.extend(
            [int(candidates.ids[line.index]) for line in lines]
            + _thread_members(workspace.pk, threads)
        )
        return compiled


def _thread_members(workspace_id: int, thread_ids: list[str]) -> list[int]:
    if not thread_ids:
        return []
    return list(
        ThreadMember.objects.filter(workspace_id=workspace_id, thread__thread_id__in=thread_ids)
        .order_by("memory_id")
        .values_list("memory_id", flat=True)
    )


def open_threads_section(
    workspace_id: int, scope_ids: list[int] | None, as_of: datetime, options: CompileOptions
) -> tuple[list[str], str]:
    """The Open Threads section (``MM_OPEN_THREADS``): the open threads of two memories or more
    in the reader's scopes, the most recently seen first (then by id), at most
    ``MM_OPEN_THREADS_MAX``, while the section stays within ``MM_OPEN_THREADS_BUDGET_SHARE`` of
    the budget; their ids and the section (empty when off or none is open)."""
    if not settings.MM_OPEN_THREADS or settings.MM_OPEN_THREADS_MAX == 0:
        return [], ""
    threads = Thread.objects.filter(
        workspace_id=workspace_id,
        status=Thread.Status.OPEN,
        size__gte=2,
        first_seen__lte=as_of,
    ).order_by("-last_seen", "thread_id")
    if scope_ids is not None:
        threads = threads.filter(scope_id__in=scope_ids)
    room = int(options.budget * settings.MM_OPEN_THREADS_BUDGET_SHARE)
    heading = section_heading(OPEN_THREADS)
    listed: list[str] = []
    section = ""
    for thread in threads[: settings.MM_OPEN_THREADS_MAX]:
        candidate = (section or heading) + render_thread(thread, options) + "\n"
        if count_tokens(candidate) > room:
            break
        section = candidate
        listed.append(thread.thread_id)
    return listed, section


@contextmanager
def _snapshot() -> Iterator[None]:
    """One view of the data for a compile's several statements (candidates, texts, names), so
    a memory forgotten or superseded meanwhile is neither rendered nor half-listed. Inside a
    caller's transaction, that transaction's view."""
    if database.in_atomic_block:
        yield
        return
    with transaction.atomic(using=database.alias):
        with database.cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        yield


def _selected(
    candidates: Candidates,
    *,
    title: str,
    as_of: datetime,
    options: CompileOptions,
    threads: str = "",
) -> tuple[list[_Line], set[int], str, int]:
    """The lines in the file, the positions of the memories too long for any file of this
    budget, the file and its tokens (``threads``: the Open Threads section, taken first)."""
    lines, too_long = _fill(
        candidates, title=title, as_of=as_of, options=options, reserved=count_tokens(threads)
    )
    while True:
        markdown = _render(
            lines,
            title=title,
            as_of=as_of,
            total=len(candidates),
            options=options,
            threads=threads,
        )
        tokens = count_tokens(markdown)
        # The lines were measured one by one and the header with its widest numbers; joined,
        # they take no more tokens in this encoding (new lines merge), so this loop is a guard
        # that runs when the header alone overflows.
        if tokens <= options.budget or not lines:
            return lines, too_long, markdown, tokens
        lines.pop()


def _fill(
    candidates: Candidates,
    *,
    title: str,
    as_of: datetime,
    options: CompileOptions,
    reserved: int = 0,
) -> tuple[list[_Line], set[int]]:
    """The lines of the longest head of the candidates that fits the budget, passing over (and
    returning the positions of) memories whose line could not fit even alone."""
    total = len(candidates)
    # The header with the widest numbers it can show.
    used = reserved + count_tokens(
        header(title=title, as_of=as_of, included=total, cut=total, options=options)
    )
    room = options.budget - used
    heading_tokens: dict[str, int] = {}
    lines: list[_Line] = []
    too_long: set[int] = set()
    sections: set[str] = set()
    for start, rows in _texts(candidates, options):
        for offset, (mem_id, text, category, scores, date, group) in enumerate(rows):
            line = render_line(text=text, scores=scores, mem_id=mem_id, options=options, date=date)
            tokens = count_tokens(line + "\n")
            if group not in heading_tokens:
                heading_tokens[group] = count_tokens(section_heading(heading_of(group)))
            if tokens + heading_tokens[group] > room:
                too_long.add(start + offset)
                continue
            cost = tokens + (0 if group in sections else heading_tokens[group])
            if used + cost > options.budget:
                return lines, too_long
            used += cost
            sections.add(group)
            lines.append(_Line(start + offset, mem_id, category, line, tokens, group))
    return lines, too_long


def _texts(candidates: Candidates, options: CompileOptions) -> Iterator[tuple[int, list[tuple]]]:
    """The candidates' mem_id, text, category, scores, date (when lines show one) and section
    (``memories.compile.groups``), a chunk at a time, in order."""
    by_entity = options.group_by == "entity"
    columns = ", ".join(
        [
            "id",
            "mem_id",
            "text",
            "category",
            "COALESCE(observed_at, created_at)",
            *(f"{d}_score" for d in STARE_DIMENSIONS),
        ]
    )
    for start in range(0, len(candidates), CHUNK):
        ids = candidates.ids[start : start + CHUNK].tolist()
        with database.cursor() as cursor:
            cursor.execute(
                f"SELECT {columns} FROM {Memory._meta.db_table}"
                " WHERE id = ANY(%s) AND workspace_id = %s",
                [ids, candidates.workspace_id],
            )
            found = {row[0]: row for row in cursor.fetchall()}
        filed = entity_groups(candidates.workspace_id, ids) if by_entity else {}
        yield (
            start,
            [
                (
                    row[1],
                    row[2],
                    row[3],
                    dict(zip(STARE_DIMENSIONS, row[5:], strict=True)),
                    row[4].astimezone(UTC).date().isoformat() if by_entity else "",
                    filed.get(pk, OTHER) if by_entity else category_group(row[3]),
                )
                for pk, row in ((pk, found[pk]) for pk in ids)
            ],
        )


def _render(
    lines: list[_Line],
    *,
    title: str,
    as_of: datetime,
    total: int,
    options: CompileOptions,
    threads: str = "",
) -> str:
    parts = [
        header(
            title=title, as_of=as_of, included=len(lines), cut=total - len(lines), options=options
        ),
        threads,
    ]
    for group in sections_of(lines, options):
        section = [line.text for line in lines if line.group == group]
        parts.append(section_heading(heading_of(group)) + "\n".join(section) + "\n")
    return "".join(parts)


def _compiled(
    candidates: Candidates,
    lines: list[_Line],
    too_long: set[int],
    *,
    markdown: str,
    tokens: int,
    as_of: datetime,
    options: CompileOptions,
) -> CompiledFile:
    def entry(index: int, mem_id: str, category: str, **extra: object) -> CompiledEntry:
        return CompiledEntry(
            mem_id=mem_id,
            category=category,
            significance=float(candidates.significance[index]),
            weight=round(float(candidates.weight[index]), 6),
            protected=bool(candidates.protected[index]),
            **extra,
        )

    def reason(index: int) -> str:
        if index in too_long:
            return TOO_LONG_REASON
        return CUT_PROTECTED_REASON if candidates.protected[index] else CUT_REASON

    included = [entry(line.index, line.mem_id, line.category, tokens=line.tokens) for line in lines]
    kept = np.zeros(len(candidates), dtype=bool)
    kept[[line.index for line in lines]] = True
    listed = np.flatnonzero(~kept)[:CUT_LIST_MAX].tolist()
    names: dict[int, tuple[str, str]] = {}
    if listed:
        with database.cursor() as cursor:
            cursor.execute(
                f"SELECT id, mem_id, category FROM {Memory._meta.db_table}"
                " WHERE id = ANY(%s) AND workspace_id = %s",
                [candidates.ids[listed].tolist(), candidates.workspace_id],
            )
            names = {row[0]: row[1:] for row in cursor.fetchall()}
    cut = [
        entry(index, *names[int(candidates.ids[index])], reason=reason(index)) for index in listed
    ]
    return CompiledFile(
        markdown=markdown,
        tokens=tokens,
        as_of=as_of,
        options=options,
        candidates=len(candidates),
        included=included,
        cut=cut,
        cut_count=int((~kept).sum()),
        cut_protected=int((candidates.protected & ~kept).sum()),
    )


def budget_line(reader: Reader, as_of: datetime, options: CompileOptions) -> BudgetLine:
    """Where the budget cuts the compiled file of what ``reader`` sees."""
    workspace, agent, scope_ids = reader.workspace, reader.agent, reader.scope_list
    title = workspace.slug if agent is None else f"{workspace.slug} (agent {agent.name})"
    with _snapshot():
        candidates = candidates_of(workspace.pk, scope_ids, as_of, options.decay, options.metadata)
        lines, too_long, _, _ = _selected(candidates, title=title, as_of=as_of, options=options)
    return BudgetLine(
        as_of=as_of,
        last_in=candidates.key(lines[-1].index) if lines else None,
        everything_in=len(lines) == len(candidates),
        too_long=frozenset(int(candidates.ids[index]) for index in too_long),
    )


@dataclass(frozen=True)
class BudgetLine:
    """Where the budget cut a compiled file compiled ``as_of``: the order key of the last memory
    in it (None when none is), whether every candidate is in, and the ids of memories too long
    for it. Keys compared with ``last_in`` must be computed at the same ``as_of``."""

    as_of: datetime
    last_in: tuple | None
    everything_in: bool
    too_long: frozenset[int]
