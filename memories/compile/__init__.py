"""The compiled memory file: the markdown an agent loads into its context at the start of a run.

What goes in
    The active memories valid at ``as_of`` (``valid_from`` ≤ as_of < ``valid_until``, either
    end open) and written by then, in the scopes the agent sees (or, for an operator, the whole
    workspace). Superseded, merged, forgotten and expired memories never appear. Status,
    significance and pins are the memories' current ones: a compile ``as_of`` a past instant
    applies that instant to validity windows, writing times and ages, not to later feedback.

Weight and protection
    weight = significance × decay factor (``memories.temporal.decay``; 1 with decay off, the
    default,
    and for pinned memories). A memory is *protected* when it is pinned or its stored
    significance is at least ``PROTECTED_SIGNIFICANCE`` (0.90), whatever its decay.

Order
    Protected memories first, then by weight, significance, the newer, the lower id: one total
    order, the same on every run.

Budget
    The file holds the longest head of that order whose rendering fits the budget (tokens, see
    ``memories.tokens``); the first memory that does not fit and every one after it are cut.
    So memories always go least weight first, a protected memory goes only when the protected
    memories alone overflow the budget (least weight first among them), and a less significant
    memory never stays while a more significant one is cut, even when it is shorter. One
    exception: a memory whose line could not fit even alone (beside the header) is passed over
    and cut, so that one very long memory does not empty the file.

Rendering
    A header (workspace, ``as_of``, memories in and cut, budget, the marks' legend), then one
    section per category in ``SECTIONS`` order, lines in the order above. Each line is
    ``- <marks> <text>``: one mark per dimension in S, T, A, R, E order, ● for a score ≥ 0.6,
    ○ below 0.6, — for no score (``MM_STARE_DISPLAY_MODE=marks``); ``verbose`` shows the
    numbers (``[S0.90 T0.40 A– R– E–]``), ``off`` no marks. With ``show_ids`` each line ends
    with ``(mem_id: …)`` so the agent can send feedback on it. A memory's text is put on one
    line (runs of white space become one space).

The search table's ``Eligible`` column comes from the same selection (``memories.eligibility``).
"""

from memories.compile.file import (
    CUT_LIST_MAX,
    CUT_PROTECTED_REASON,
    CUT_REASON,
    TOO_LONG_REASON,
    BudgetLine,
    CompiledEntry,
    CompiledFile,
    budget_line,
    compiled_memory_file,
)
from memories.compile.options import (
    DISPLAY_MODES,
    GROUPINGS,
    CompileOptions,
    compile_options,
    decay_policy,
)
from memories.compile.render import SECTIONS, render_line, stare_marks
from memories.compile.selection import PROTECTED_SIGNIFICANCE, keys_of

__all__ = [
    "CUT_LIST_MAX",
    "CUT_PROTECTED_REASON",
    "CUT_REASON",
    "TOO_LONG_REASON",
    "BudgetLine",
    "DISPLAY_MODES",
    "GROUPINGS",
    "PROTECTED_SIGNIFICANCE",
    "SECTIONS",
    "CompileOptions",
    "CompiledEntry",
    "CompiledFile",
    "budget_line",
    "compile_options",
    "compiled_memory_file",
    "decay_policy",
    "keys_of",
    "render_line",
    "stare_marks",
]
