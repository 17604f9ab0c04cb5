"""Temporal (T), below the layers: ``validity`` (the one rule of what is valid at an instant)
and ``decay`` (how a memory's weight in the compiled file falls with its age). Search ages its
score by ``MM_S1_HALF_LIFE_DAYS`` (``memories.search.ranking``); supersession closes a window
(``memories.services.supersede``)."""
