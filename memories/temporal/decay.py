"""Decay curves: how a memory's weight in the compiled memory file falls with its age.

A curve multiplies a memory's significance by ``0.5 ** (age_days / half_life_days)``, where
``age_days`` counts from when the memory was written (``created_at``) to the compile's
``as_of``. It changes the weight used to order and cut the compiled file, and nothing else:
stored significance never changes by decay, and search does not use these curves (search has
its own age factor, ``MM_S1_HALF_LIFE_DAYS``).

=========  ==============  ===================================================
preset     half-life       weight after 30 / 90 / 365 days (of 1.0)
=========  ==============  ===================================================
never      none            1.0 / 1.0 / 1.0 (the default: decay off)
slow       365 days        0.94 / 0.84 / 0.50
standard   90 days         0.79 / 0.50 / 0.06
fast       14 days         0.23 / 0.01 / 0.00
=========  ==============  ===================================================

Hard expiry is not a curve: a memory whose ``valid_until`` has passed is never in the file,
whatever the preset. Pinned memories do not decay.

This module imports nothing from Django so that settings can read the preset names from it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: Half-life in days of each preset; ``None`` never decays.
PRESETS: dict[str, float | None] = {
    "never": None,
    "slow": 365.0,
    "standard": 90.0,
    "fast": 14.0,
}
PRESET_NAMES = tuple(PRESETS)
DEFAULT_PRESET = "never"


@dataclass(frozen=True)
class DecayPolicy:
    """The preset for every category, with per-category overrides."""

    preset: str = DEFAULT_PRESET
    overrides: tuple[tuple[str, str], ...] = ()

    def preset_for(self, category: str) -> str:
        return dict(self.overrides).get(category, self.preset)

    def half_life_days(self, category: str) -> float:
        """The half-life of ``category``'s curve; infinity for ``never``."""
        half_life = PRESETS[self.preset_for(category)]
        return math.inf if half_life is None else half_life

    @property
    def is_off(self) -> bool:
        return all(PRESETS[name] is None for name in (self.preset, *dict(self.overrides).values()))

    def describe(self) -> str:
        """e.g. ``standard; event: fast, decision: never``."""
        if not self.overrides:
            return self.preset
        return self.preset + "; " + ", ".join(f"{c}: {p}" for c, p in self.overrides)


def parse_overrides(text: str, categories: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """``category:preset`` pairs separated by commas (``MM_DECAY_CATEGORIES``), checked against
    the known categories and presets. Raises ValueError naming what is wrong."""
    pairs: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        category, sep, preset = (s.strip() for s in item.partition(":"))
        if not sep or not category or not preset:
            raise ValueError(f"{item!r} is not category:preset")
        if category not in categories:
            raise ValueError(f"{category!r} is not a category (one of: {', '.join(categories)})")
        if preset not in PRESETS:
            raise ValueError(f"{preset!r} is not a decay preset (one of: {', '.join(PRESETS)})")
        if category in pairs:
            raise ValueError(f"{category!r} is given twice")
        pairs[category] = preset
    return tuple(sorted(pairs.items()))
