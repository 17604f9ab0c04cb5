"""The compiled file's markdown: header, sections, one line per memory with its STARE marks."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from memories import metadata_filter
from memories.compile.options import CompileOptions
from memories.models import STARE_DIMENSIONS, Memory, Thread
from memories.tokens import COUNTER_NAME

MARK_THRESHOLD = 0.6
MARK_HIGH, MARK_LOW, MARK_NONE = "●", "○", "—"
VERBOSE_NONE = "–"
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
    *,
    text: str,
    scores: dict[str, float | None],
    mem_id: str,
    options: CompileOptions,
    date: str = "",
) -> str:
    """``- [date] [marks] text [(mem_id: …)]``: ``date`` (YYYY-MM-DD) when the file is grouped
    by entity."""
    marks = stare_marks(scores, options.display_mode)
    line = "- " + (date + " " if date else "") + (marks + " " if marks else "")
    line += " ".join(text.split())
    if options.show_ids:
        line += f" (mem_id: {mem_id})"
    return line


#: The heading of the Open Threads section (``MM_OPEN_THREADS``), before the categories.
OPEN_THREADS = "Open Threads"


def render_thread(thread: Thread, options: CompileOptions) -> str:
    """One open thread: its title, size, span, and the first cue that keeps it open."""
    first, last = (
        moment.astimezone(UTC).date() for moment in (thread.first_seen, thread.last_seen)
    )
    line = (
        f"- {thread.title}: {thread.size} memories over {thread.sessions} "
        f"{'session' if thread.sessions == 1 else 'sessions'}, {first} to {last}"
    )
    if thread.cues:
        cue = thread.cues[0]
        line += f"; open: {cue['cue']} ({' '.join(str(cue['words']).split())})"
        if options.show_ids:
            line += f" in {cue['mem_id']}"
    if options.show_ids:
        line += f" (thread_id: {thread.thread_id})"
    return line


def section_heading(title: str) -> str:
    return f"\n## {title}\n\n"


def header(*, title: str, as_of: datetime, included: int, cut: int, options: CompileOptions) -> str:
    lines = [
        f"# Memory: {title}",
        "",
        f"As of {utc(as_of)}: {included} {'memory' if included == 1 else 'memories'} in, "
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
    if options.metadata is not None:
        chosen = json.dumps(metadata_filter.as_json(options.metadata), ensure_ascii=False)
        lines.append(f"Only memories whose metadata match {chosen}.")
    if options.group_by == "entity":
        lines.append(
            "By entity (the one each memory mentions that is mentioned most; Other: none), "
            "each line dated when it happened or was written (UTC)."
        )
    return "\n".join(lines) + "\n"


def utc(value: datetime) -> str:
    """ISO 8601 in UTC to the second, e.g. ``2026-03-01T09:00:00Z`` (years always 4 digits)."""
    return value.astimezone(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
