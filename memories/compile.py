"""The compiled memory file: the markdown an agent loads into its context at the start of a run.

What goes in
    The active memories valid at ``as_of`` (``valid_from`` ≤ as_of < ``valid_until``, either
    end open) and written by then, in the scopes the agent sees (or, for an operator, the whole
    workspace). Superseded, merged, forgotten and expired memories never appear.

Weight and protection
    weight = significance × decay factor (``memories.decay``; 1 with decay off, the default,
    and for pinned memories). A memory is *protected* when it is pinned or its weight is at
    least ``PROTECTED_WEIGHT`` (0.90).

Order
    Protected memories first, then by weight, significance, the newer, the lower id: one total
    order, the same on every run.

Budget
    The file holds the longest head of that order whose rendering fits the budget (tokens, see
    ``memories.tokens``); the first memory that does not fit and every one after it are cut.
    So memories always go least weight first, a protected memory goes only when the protected
    memories alone overflow the budget (least weight first among them), and a less significant
    memory never stays while a more significant one is cut, even when it is shorter.

Rendering
    A header (workspace, ``as_of``, memories in and cut, budget, the marks' legend), then one
    section per category in ``SECTIONS`` order, lines in the order above. Each line is
    ``- <marks> <text>``: one mark per dimension in S, T, A, R, E order, ● for a score ≥ 0.6,
    ○ below 0.6, — for no score (``MM_STARE_DISPLAY_MODE=marks``); ``verbose`` shows the
    numbers (``[S0.90 T0.40 A– R– E–]``), ``off`` no marks. With ``show_ids`` each line ends
    with ``(mem_id: …)`` so the agent can send feedback on it. A memory's text is put on one
    line (runs of white space become one space).

The search table's ``Eligible`` column comes from the same selection (``EligibilityBoundary``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import connection
from django.utils import timezone

from memories import rules
from memories.decay import PRESET_NAMES, DecayPolicy, parse_overrides
from memories.errors import Errors
from memories.models import STARE_DIMENSIONS, Agent, Memory, Workspace
from memories.selectors import visible_scope_ids
from memories.tokens import COUNTER_NAME, count_each, count_tokens

DISPLAY_MODES = ("marks", "verbose", "off")
MARK_THRESHOLD = 0.6
MARK_HIGH, MARK_LOW, MARK_NONE = "●", "○", "—"
VERBOSE_NONE = "–"
PROTECTED_WEIGHT = 0.90
#: Sections in the order they appear; every category has one.
SECTIONS: tuple[tuple[str, str], ...] = (
    (Memory.Category.DECISION, "Decisions"),
    (Memory.Category.COMMITMENT, "Commitments"),
    (Memory.Category.PREFERENCE, "Preferences"),
    (Memory.Category.FACT, "Facts"),
    (Memory.Category.PROCEDURE, "Procedures"),
    (Memory.Category.EVENT, "Events"),
    (Memory.Category.OBSERVATION, "Observations"),
)
#: How many cut memories a compile lists by name (all are counted).
CUT_LIST_MAX = 100
#: Memories whose text is read and measured at a time while filling the budget.
CHUNK = 256
SECONDS_PER_DAY = 86_400.0


def decay_policy() -> DecayPolicy:
    """The configured decay: ``MM_DECAY_PRESET`` with ``MM_DECAY_CATEGORIES`` overrides."""
    try:
        overrides = parse_overrides(settings.MM_DECAY_CATEGORIES, tuple(Memory.Category.values))
    except ValueError as exc:
        raise ImproperlyConfigured(f"MM_DECAY_CATEGORIES: {exc}") from None
    return DecayPolicy(preset=settings.MM_DECAY_PRESET, overrides=overrides)


@dataclass(frozen=True)
class CompileOptions:
    budget: int
    display_mode: str
    decay: DecayPolicy
    show_ids: bool


def compile_options(
    *,
    budget: int | None = None,
    display_mode: str | None = None,
    decay: str | None = None,
    show_ids: bool | None = None,
) -> CompileOptions:
    """The settings' defaults, overridden per request. A ``decay`` preset given here applies to
    every category (the per-category overrides are the configured default's)."""
    errors = Errors()
    if budget is not None and (message := rules.compile_budget(budget)):
        errors.add("budget", message)
    if message := rules.choice(display_mode, list(DISPLAY_MODES)):
        errors.add("display_mode", message)
    if message := rules.choice(decay, list(PRESET_NAMES)):
        errors.add("decay", message)
    errors.raise_if_any()
    return CompileOptions(
        budget=settings.MM_COMPILE_BUDGET_TOKENS if budget is None else budget,
        display_mode=display_mode or settings.MM_STARE_DISPLAY_MODE,
        decay=DecayPolicy(preset=decay) if decay else decay_policy(),
        show_ids=settings.MM_COMPILE_SHOW_IDS if show_ids is None else show_ids,
    )


# --- Selection -----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Candidates:
    """Columns of the candidate memories, as arrays in one total order (see module docstring)."""

    ids: np.ndarray
    significance: np.ndarray
    created: np.ndarray  # seconds since the epoch
    weight: np.ndarray
    protected: np.ndarray

    def __len__(self) -> int:
        return len(self.ids)

    def key(self, index: int) -> tuple[bool, float, float, float, int]:
        """The sort key of one memory: smaller comes first."""
        return (
            not bool(self.protected[index]),
            -float(self.weight[index]),
            -float(self.significance[index]),
            -float(self.created[index]),
            int(self.ids[index]),
        )


def _weigh(
    significance: np.ndarray,
    pinned: np.ndarray,
    created: np.ndarray,
    half_life: np.ndarray,
    as_of: datetime,
) -> tuple[np.ndarray, np.ndarray]:
    """Weight and protection of memories (one implementation for files and for Eligible)."""
    age_days = np.maximum(as_of.timestamp() - created, 0.0) / SECONDS_PER_DAY
    factor = np.where(pinned, 1.0, np.power(0.5, age_days / half_life))
    weight = significance * factor
    return weight, pinned | (weight >= PROTECTED_WEIGHT)


def _ordered(
    ids: np.ndarray,
    significance: np.ndarray,
    pinned: np.ndarray,
    created: np.ndarray,
    half_life: np.ndarray,
    as_of: datetime,
) -> _Candidates:
    weight, protected = _weigh(significance, pinned, created, half_life, as_of)
    # lexsort sorts by the last key first.
    order = np.lexsort((ids, -created, -significance, -weight, ~protected))
    return _Candidates(
        ids=ids[order],
        significance=significance[order],
        created=created[order],
        weight=weight[order],
        protected=protected[order],
    )


_CANDIDATES_SQL = f"""
    SELECT id, significance, pinned, extract(epoch FROM created_at)::float8, category
    FROM {Memory._meta.db_table}
    WHERE workspace_id = %(workspace)s AND status = 'active' AND created_at <= %(as_of)s
        AND (valid_from IS NULL OR valid_from <= %(as_of)s)
        AND (valid_until IS NULL OR valid_until > %(as_of)s)
"""


def _candidates(
    workspace_id: int, scope_ids: list[int] | None, as_of: datetime, policy: DecayPolicy
) -> _Candidates:
    sql, params = _CANDIDATES_SQL, {"workspace": workspace_id, "as_of": as_of}
    if scope_ids is not None:
        sql += " AND scope_id = ANY(%(scopes)s)"
        params["scopes"] = scope_ids
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    count = len(rows)
    # One object array, then a typed column each: much faster than transposing the tuples.
    table = np.array(rows, dtype=object).reshape(count, 5)
    half_life = np.full(count, math.inf)
    if not policy.is_off:
        for category in Memory.Category.values:
            if math.isfinite(days := policy.half_life_days(category)):
                half_life[table[:, 4] == category] = days
    return _ordered(
        table[:, 0].astype(np.int64),
        table[:, 1].astype(float),
        table[:, 2].astype(bool),
        table[:, 3].astype(float),
        half_life,
        as_of,
    )


# --- Rendering -----------------------------------------------------------------------------


def stare_marks(scores: dict[str, float | None], display_mode: str) -> str:
    """The marks of one memory's five scores, e.g. ``●○———`` or ``[S0.90 T0.40 A– R– E–]``."""
    if display_mode == "off":
        return ""
    if display_mode == "verbose":
        parts = [
            f"{d.upper()}{VERBOSE_NONE}" if v is None else f"{d.upper()}{v:.2f}"
            for d, v in ((d, scores[d]) for d in STARE_DIMENSIONS)
        ]
        return "[" + " ".join(parts) + "]"
    return "".join(
        MARK_NONE if v is None else MARK_HIGH if v >= MARK_THRESHOLD else MARK_LOW
        for v in (scores[d] for d in STARE_DIMENSIONS)
    )


def render_line(
    *, text: str, scores: dict[str, float | None], mem_id: str, options: CompileOptions
) -> str:
    marks = stare_marks(scores, options.display_mode)
    line = "- " + (marks + " " if marks else "") + " ".join(text.split())
    if options.show_ids:
        line += f" (mem_id: {mem_id})"
    return line


def _section_heading(title: str) -> str:
    return f"\n## {title}\n\n"


def _header(
    *, title: str, as_of: datetime, included: int, cut: int, options: CompileOptions
) -> str:
    lines = [
        f"# Memory: {title}",
        "",
        f"As of {_utc(as_of)}: {included} {'memory' if included == 1 else 'memories'} in, "
        f"{cut} cut to fit "
        f"{options.budget} tokens ({COUNTER_NAME}).",
    ]
    if options.display_mode == "marks":
        lines.append(
            f"Marks S T A R E: {MARK_HIGH} score ≥ {MARK_THRESHOLD}, "
            f"{MARK_LOW} below, {MARK_NONE} no score."
        )
    elif options.display_mode == "verbose":
        lines.append(f"Scores S T A R E from 0 to 1; {VERBOSE_NONE} no score.")
    if not options.decay.is_off:
        lines.append(f"Decay: {options.decay.describe()}.")
    return "\n".join(lines) + "\n"


def _utc(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- The file ------------------------------------------------------------------------------


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


@dataclass
class _Line:
    index: int  # position in the candidates' order
    mem_id: str
    category: str
    text: str
    tokens: int


CUT_REASON = "budget: the memories before it in the order filled the file"
CUT_PROTECTED_REASON = (
    "budget: the protected memories alone overflow it, and those before it filled the file"
)


def compiled_memory_file(
    *,
    workspace: Workspace,
    agent: Agent | None = None,
    as_of: datetime | None = None,
    options: CompileOptions | None = None,
) -> CompiledFile:
    """The compiled memory file of ``agent`` (the scopes it sees) or, without an agent, of the
    whole workspace. Same memories, options and ``as_of`` give the same bytes."""
    options = options or compile_options()
    as_of = as_of or timezone.now()
    title = workspace.slug if agent is None else f"{workspace.slug} (agent {agent.name})"
    scope_ids = None if agent is None else visible_scope_ids(agent)
    candidates = _candidates(workspace.pk, scope_ids, as_of, options.decay)
    lines, markdown, tokens = _selected(candidates, title=title, as_of=as_of, options=options)
    return _compiled(
        candidates, lines, markdown=markdown, tokens=tokens, as_of=as_of, options=options
    )


def _selected(
    candidates: _Candidates, *, title: str, as_of: datetime, options: CompileOptions
) -> tuple[list[_Line], str, int]:
    """The lines in the file, the file and its tokens."""
    lines = _fill(candidates, title=title, as_of=as_of, options=options)
    while True:
        markdown = _render(lines, title=title, as_of=as_of, total=len(candidates), options=options)
        tokens = count_tokens(markdown)
        # The lines were measured one by one and the header with its widest numbers; joined,
        # they take no more tokens in this encoding (new lines merge), so this loop is a guard
        # that runs when the header alone overflows.
        if tokens <= options.budget or not lines:
            return lines, markdown, tokens
        lines.pop()


def _fill(
    candidates: _Candidates, *, title: str, as_of: datetime, options: CompileOptions
) -> list[_Line]:
    """The lines of the longest head of the candidates that fits the budget."""
    total = len(candidates)
    # The header with the widest numbers it can show.
    used = count_tokens(
        _header(title=title, as_of=as_of, included=total, cut=total, options=options)
    )
    heading_tokens = dict(
        zip(
            (category for category, _ in SECTIONS),
            count_each([_section_heading(name) for _, name in SECTIONS]),
            strict=True,
        )
    )
    lines: list[_Line] = []
    sections: set[str] = set()
    for start, rows in _texts(candidates):
        rendered = [
            render_line(text=text, scores=scores, mem_id=mem_id, options=options)
            for mem_id, text, _, scores in rows
        ]
        for offset, ((mem_id, _text, category, _), line, tokens) in enumerate(
            zip(rows, rendered, count_each([line + "\n" for line in rendered]), strict=True)
        ):
            cost = tokens + (0 if category in sections else heading_tokens[category])
            if used + cost > options.budget:
                return lines
            used += cost
            sections.add(category)
            lines.append(_Line(start + offset, mem_id, category, line, tokens))
    return lines


def _texts(candidates: _Candidates) -> Iterator[tuple[int, list[tuple]]]:
    """The candidates' mem_id, text, category and scores, a chunk at a time, in order."""
    columns = ", ".join(
        ["id", "mem_id", "text", "category", *(f"{d}_score" for d in STARE_DIMENSIONS)]
    )
    for start in range(0, len(candidates), CHUNK):
        ids = candidates.ids[start : start + CHUNK].tolist()
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT {columns} FROM {Memory._meta.db_table} WHERE id = ANY(%s)", [ids]
            )
            found = {row[0]: row for row in cursor.fetchall()}
        yield (
            start,
            [
                (row[1], row[2], row[3], dict(zip(STARE_DIMENSIONS, row[4:], strict=True)))
                for row in (found[pk] for pk in ids)
            ],
        )


def _render(
    lines: list[_Line], *, title: str, as_of: datetime, total: int, options: CompileOptions
) -> str:
    parts = [
        _header(
            title=title, as_of=as_of, included=len(lines), cut=total - len(lines), options=options
        )
    ]
    for category, name in SECTIONS:
        section = [line.text for line in lines if line.category == category]
        if section:
            parts.append(_section_heading(name) + "\n".join(section) + "\n")
    return "".join(parts)


def _compiled(
    candidates: _Candidates,
    lines: list[_Line],
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
            **extra,  # type: ignore[arg-type]
        )

    included = [entry(line.index, line.mem_id, line.category, tokens=line.tokens) for line in lines]
    first_cut = len(lines)
    listed = candidates.ids[first_cut : first_cut + CUT_LIST_MAX].tolist()
    names: dict[int, tuple[str, str]] = {}
    if listed:
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT id, mem_id, category FROM {Memory._meta.db_table} WHERE id = ANY(%s)",
                [listed],
            )
            names = {row[0]: row[1:] for row in cursor.fetchall()}
    cut = [
        entry(
            first_cut + offset,
            *names[pk],
            reason=CUT_PROTECTED_REASON if candidates.protected[first_cut + offset] else CUT_REASON,
        )
        for offset, pk in enumerate(listed)
    ]
    return CompiledFile(
        markdown=markdown,
        tokens=tokens,
        as_of=as_of,
        options=options,
        candidates=len(candidates),
        included=included,
        cut=cut,
        cut_count=len(candidates) - first_cut,
        cut_protected=int(candidates.protected[first_cut:].sum()),
    )


# --- Where the budget cuts ----------------------------------------------------------------


def key_of(memory: Memory, as_of: datetime, policy: DecayPolicy) -> tuple:
    """A memory's place in the compiled file's order (smaller comes first), as the selection
    computes it."""
    return _ordered(
        np.array([memory.pk], dtype=np.int64),
        np.array([memory.significance]),
        np.array([memory.pinned]),
        np.array([memory.created_at.timestamp()]),
        np.array([policy.half_life_days(memory.category)]),
        as_of,
    ).key(0)


def budget_line(
    agent: Agent, as_of: datetime, options: CompileOptions
) -> tuple[tuple | None, bool]:
    """Where the budget cuts ``agent``'s compiled file: the key of the last memory in it (None
    when none is), and whether every candidate is in."""
    candidates = _candidates(agent.workspace_id, visible_scope_ids(agent), as_of, options.decay)
    title = f"{agent.workspace.slug} (agent {agent.name})"
    lines, _, _ = _selected(candidates, title=title, as_of=as_of, options=options)
    last_in = candidates.key(len(lines) - 1) if lines else None
    return last_in, len(lines) == len(candidates)
