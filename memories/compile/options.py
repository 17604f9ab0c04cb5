"""What a compile is asked for: budget, display mode, decay, ids, a metadata filter, the
grouping; the settings' defaults."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from memories import rules
from memories.errors import Errors
from memories.models import Memory
from memories.temporal.decay import PRESET_NAMES, DecayPolicy, parse_overrides

DISPLAY_MODES = ("marks", "verbose", "off")
#: How the file's lines are grouped: a section per category, or per entity (a customer, a
#: person, a product) with each line's date.
GROUPINGS = ("category", "entity")


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
    #: Only the memories whose metadata match (``memories.metadata_filter``); None: all.
    metadata: Any = None
    group_by: str = "category"


def compile_options(
    *,
    budget: int | None = None,
    display_mode: str | None = None,
    decay: str | None = None,
    show_ids: bool | None = None,
    metadata: Any = None,
    group_by: str | None = None,
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
    if message := rules.choice(group_by, list(GROUPINGS)):
        errors.add("group_by", message)
    errors.raise_if_any()
    return CompileOptions(
        budget=settings.MM_COMPILE_BUDGET_TOKENS if budget is None else budget,
        display_mode=display_mode or settings.MM_STARE_DISPLAY_MODE,
        decay=DecayPolicy(preset=decay) if decay else decay_policy(),
        show_ids=settings.MM_COMPILE_SHOW_IDS if show_ids is None else show_ids,
        metadata=metadata,
        group_by=group_by or "category",
    )
